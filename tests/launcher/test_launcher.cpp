// ember-run's plain-C++ parts: the line prefixer (whole lines only, prefix per line, partial
// tails, long lines), torchrun's prefix template, argument parsing and the worker environment.
#include <doctest/doctest.h>

#include <map>

#include "launch_config.h"
#include "line_prefixer.h"

using namespace ember::dist::launcher;

TEST_CASE("LinePrefixer releases only whole lines, each prefixed") {
  LinePrefixer p("[default1]:");
  std::string out;
  p.feed("hel", out);
  CHECK(out.empty());
  CHECK(p.has_pending());
  p.feed("lo\nwor", out);
  CHECK(out == "[default1]:hello\n");
  out.clear();
  p.feed("ld\n\nx\ny", out);
  CHECK(out == "[default1]:world\n[default1]:\n[default1]:x\n");
  out.clear();
  p.finish(out);  // the unterminated tail gets its own newline
  CHECK(out == "[default1]:y\n");
  out.clear();
  p.finish(out);
  CHECK(out.empty());
}

TEST_CASE("LinePrefixer cuts lines longer than its limit") {
  LinePrefixer p("p:", 4);
  std::string out;
  p.feed("abcdefghij", out);
  CHECK(out == "p:abcd\np:efgh\n");
  out.clear();
  p.feed("\n", out);
  CHECK(out == "p:ij\n");
}

TEST_CASE("LinePrefixer keeps bytes as they are (no text decoding)") {
  LinePrefixer p("[r]:");
  std::string out;
  std::string data("a\0b\r\n", 5);
  p.feed(data, out);
  CHECK(out == std::string("[r]:a\0b\r\n", 9));
}

TEST_CASE("torchrun's prefix template") {
  CHECK(expand_prefix_template(kDefaultPrefixTemplate, "default", 5, 1) == "[default1]:");
  CHECK(expand_prefix_template("[${rank}]:", "default", 5, 1) == "[5]:");
  CHECK(expand_prefix_template("$role_name-$local_rank/$rank $$ ${nope} $nope $", "trainer", 7, 3) ==
        "trainer-3/7 $ ${nope} $nope $");
  CHECK(expand_prefix_template("${rank", "r", 1, 0) == "${rank");
}

namespace {
ParseResult parse(std::vector<std::string> a) { return parse_launch_args(a); }
const char* no_env(const char*) { return nullptr; }
}  // namespace

TEST_CASE("ember-run parses torchrun's options in both spellings") {
  auto r = parse({"--nproc_per_node=4", "--nnodes", "2:2", "--node-rank", "1", "--master_addr", "10.0.0.1",
                  "--master-port=1234", "--max_restarts", "3", "--monitor-interval", "0.5", "prog", "--nnodes", "x"});
  REQUIRE(r.error.empty());
  CHECK(r.config.nproc_per_node == 4);
  CHECK(r.config.nnodes == 2);
  CHECK(r.config.node_rank == 1);
  CHECK(r.config.master_addr == "10.0.0.1");
  CHECK(r.config.master_port == 1234);
  CHECK(r.config.max_restarts == 3);
  CHECK(r.config.monitor_interval == 0.5);
  CHECK(r.config.program == std::vector<std::string>{"prog", "--nnodes", "x"});  // the program's own arguments

  auto d = parse({"--", "-weird-prog"});
  REQUIRE(d.error.empty());
  CHECK(d.config.nproc_per_node == 1);
  CHECK(d.config.master_addr == "127.0.0.1");
  CHECK(d.config.master_port == 29500);
  CHECK(d.config.run_id == "none");
  CHECK(d.config.program == std::vector<std::string>{"-weird-prog"});

  auto f = parse({"--local_ranks_filter=0,2", "--standalone", "p"});
  REQUIRE(f.error.empty());
  CHECK(f.config.standalone);
  CHECK(f.config.local_ranks_filter == std::vector<int>{0, 2});
}

TEST_CASE("ember-run rejects what it cannot do") {
  CHECK(parse({}).error.find("required") != std::string::npos);
  CHECK(parse({"--nnodes=1:4", "p"}).error.find("elastic") != std::string::npos);
  CHECK(parse({"--nnodes=2", "--node-rank=2", "p"}).error.find("out of range") != std::string::npos);
  CHECK(parse({"--nproc-per-node=0", "p"}).error.find("invalid value") != std::string::npos);
  CHECK(parse({"--nproc-per-node=gpu", "p"}).error.find("GPU count") != std::string::npos);
  CHECK(parse({"--bogus", "p"}).error.find("unrecognized") != std::string::npos);
  CHECK(parse({"--master-port"}).error.find("expected one argument") != std::string::npos);
  CHECK(parse({"--standalone", "--nnodes=2", "p"}).error.find("single node") != std::string::npos);
}

TEST_CASE("worker environment follows torchrun's agent") {
  auto r = parse({"--nproc-per-node=4", "--nnodes=2", "--node-rank=1", "--max-restarts=2", "p"});
  REQUIRE(r.error.empty());
  auto env_vec = worker_env(r.config, 3, 1, no_env);
  std::map<std::string, std::string> env(env_vec.begin(), env_vec.end());
  CHECK(env["RANK"] == "7");
  CHECK(env["LOCAL_RANK"] == "3");
  CHECK(env["WORLD_SIZE"] == "8");
  CHECK(env["LOCAL_WORLD_SIZE"] == "4");
  CHECK(env["GROUP_RANK"] == "1");
  CHECK(env["GROUP_WORLD_SIZE"] == "2");
  CHECK(env["ROLE_RANK"] == "7");
  CHECK(env["ROLE_WORLD_SIZE"] == "8");
  CHECK(env["ROLE_NAME"] == "default");
  CHECK(env["MASTER_ADDR"] == "127.0.0.1");
  CHECK(env["MASTER_PORT"] == "29500");
  CHECK(env["TORCHELASTIC_RESTART_COUNT"] == "1");
  CHECK(env["TORCHELASTIC_MAX_RESTARTS"] == "2");
  CHECK(env["TORCHELASTIC_RUN_ID"] == "none");
  CHECK(env["TORCHELASTIC_USE_AGENT_STORE"] == "False");
  CHECK(env["TORCH_NCCL_ASYNC_ERROR_HANDLING"] == "1");
  CHECK(env["OMP_NUM_THREADS"] == "1");

  // OMP_NUM_THREADS: left alone when set, and not set for a single worker.
  auto has_omp = [](const auto& v) {
    for (const auto& kv : v)
      if (kv.first == "OMP_NUM_THREADS") return true;
    return false;
  };
  CHECK_FALSE(has_omp(worker_env(r.config, 0, 0, [](const char* k) -> const char* {
    return std::string(k) == "OMP_NUM_THREADS" ? "8" : nullptr;
  })));
  auto single = parse({"p"});
  CHECK_FALSE(has_omp(worker_env(single.config, 0, 0, no_env)));
}
