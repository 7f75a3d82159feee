// ember-run's command line (torchrun's options and defaults, both the dashed and the
// underscored spellings) and the environment each worker gets (torchrun's variables).
// Plain C++ without process calls, so tests/launcher/test_line_prefixer.cpp tests it directly.
#pragma once

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

namespace ember::dist::launcher {

struct LaunchConfig {
  int nproc_per_node = 1;
  int nnodes = 1;
  int node_rank = 0;
  std::string master_addr = "127.0.0.1";
  int master_port = 29500;
  bool standalone = false;
  int max_restarts = 0;
  double monitor_interval = 0.1;  // seconds, torchrun's default
  double stop_timeout = 30.0;     // SIGTERM → SIGKILL grace, torchrun's close() timeout
  std::string run_id = "none";    // torchrun's --rdzv-id default
  std::string role = "default";
  std::vector<int> local_ranks_filter;  // empty: every local rank's output is shown
  std::vector<std::string> program;     // the program and its arguments
  bool help = false;
};

struct ParseResult {
  LaunchConfig config;
  std::string error;  // empty when parsing succeeded
};

namespace detail {

inline bool parse_int(std::string_view s, int& out) {
  if (s.empty()) return false;
  std::string str(s);
  char* end = nullptr;
  long v = std::strtol(str.c_str(), &end, 10);
  if (*end != '\0' || v < -(1L << 30) || v > (1L << 30)) return false;
  out = static_cast<int>(v);
  return true;
}

inline bool parse_double(std::string_view s, double& out) {
  if (s.empty()) return false;
  std::string str(s);
  char* end = nullptr;
  out = std::strtod(str.c_str(), &end);
  return *end == '\0';
}

// "--nproc_per_node" and "--nproc-per-node" are the same option, as in torchrun.
inline std::string canonical_option(std::string_view name) {
  std::string out(name);
  for (size_t i = 2; i < out.size(); ++i)
    if (out[i] == '_') out[i] = '-';
  return out;
}

// Sets option `name` (canonical spelling) of `c` to `value`; the error, if the value is bad
// or the option unknown (`arg`: the argument as given).
inline std::optional<std::string> set_option(LaunchConfig& c, const std::string& name, const std::string& value,
                                             const std::string& arg) {
  auto bad = [&] { return "argument " + name + ": invalid value '" + value + "'"; };
  if (name == "--nproc-per-node") {
    if (value == "gpu" || value == "auto")
      return std::string("--nproc-per-node=" + value + " needs the GPU count, which ember-run does not query; give a number");
    if (value == "cpu") {
      c.nproc_per_node = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    } else if (!parse_int(value, c.nproc_per_node) || c.nproc_per_node < 1) {
      return bad();
    }
  } else if (name == "--nnodes") {
    // torchrun's elastic "MIN:MAX"; only a fixed size (MIN == MAX) is supported.
    std::string lo = value, hi = value;
    if (size_t colon = value.find(':'); colon != std::string::npos) {
      lo = value.substr(0, colon);
      hi = value.substr(colon + 1);
    }
    int a = 0, b = 0;
    if (!detail::parse_int(lo, a) || !detail::parse_int(hi, b) || a < 1) return bad();
    if (a != b) return std::string("--nnodes=" + value + ": elastic (MIN:MAX) rendezvous is not built; give a fixed node count");
    c.nnodes = a;
  } else if (name == "--node-rank") {
    if (!detail::parse_int(value, c.node_rank) || c.node_rank < 0) return bad();
  } else if (name == "--master-addr") {
    if (value.empty()) return bad();
    c.master_addr = value;
  } else if (name == "--master-port") {
    if (!detail::parse_int(value, c.master_port) || c.master_port < 1 || c.master_port > 65535) return bad();
  } else if (name == "--max-restarts") {
    if (!detail::parse_int(value, c.max_restarts) || c.max_restarts < 0) return bad();
  } else if (name == "--monitor-interval") {
    if (!detail::parse_double(value, c.monitor_interval) || !(c.monitor_interval > 0)) return bad();
  } else if (name == "--stop-timeout") {
    if (!detail::parse_double(value, c.stop_timeout) || !(c.stop_timeout >= 0)) return bad();
  } else if (name == "--rdzv-id") {
    c.run_id = value;
  } else if (name == "--role") {
    c.role = value;
  } else if (name == "--local-ranks-filter") {
    size_t start = 0;
    while (start <= value.size()) {
      size_t comma = value.find(',', start);
      if (comma == std::string::npos) comma = value.size();
      int rank = 0;
      if (!detail::parse_int(value.substr(start, comma - start), rank) || rank < 0)
        return std::string("--local_ranks_filter must be a comma-separated list of integers e.g. --local_ranks_filter=0,1,2");
      c.local_ranks_filter.push_back(rank);
      start = comma + 1;
    }
  } else {
    return std::string("unrecognized option " + arg);
  }
  return std::nullopt;
}

}  // namespace detail

// Parses ember-run's arguments (argv without the program name). Options come first; the first
// argument that is not an option (or everything after "--") is the program and its arguments.
inline ParseResult parse_launch_args(const std::vector<std::string>& args) {
  ParseResult r;
  LaunchConfig& c = r.config;
  auto fail = [&](std::string msg) {
    r.error = std::move(msg);
    return r;
  };
  size_t i = 0;
  for (; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") {
      ++i;
      break;
    }
    if (arg.size() < 2 || arg[0] != '-') break;
    std::string name = arg;
    std::optional<std::string> inline_value;
    if (size_t eq = arg.find('='); eq != std::string::npos) {
      name = arg.substr(0, eq);
      inline_value = arg.substr(eq + 1);
    }
    name = detail::canonical_option(name);
    // Flags without a value.
    if (name == "-h" || name == "--help") {
      c.help = true;
      return r;
    }
    if (name == "--standalone" || name == "--no-python") {
      if (inline_value) return fail(name + " takes no value");
      if (name == "--standalone") c.standalone = true;
      // --no-python: ember-run always executes the program directly, as torchrun does with it.
      continue;
    }
    std::string value;
    if (inline_value) {
      value = *inline_value;
    } else if (i + 1 < args.size()) {
      value = args[++i];
    } else {
      return fail("argument " + name + ": expected one argument");
    }
    if (auto error = detail::set_option(c, name, value, arg)) return fail(*error);
  }
  c.program.assign(args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
  if (c.program.empty()) return fail("the following arguments are required: training_script");
  if (c.node_rank >= c.nnodes)
    return fail("--node-rank " + std::to_string(c.node_rank) + " is out of range for --nnodes " +
                std::to_string(c.nnodes));
  if (c.standalone && c.nnodes != 1) return fail("--standalone launches a single node; drop --nnodes");
  return r;
}

// The environment torchrun's agent gives worker `local_rank` (local_elastic_agent.py), for a
// static rendezvous: the launcher runs no store of its own (TORCHELASTIC_USE_AGENT_STORE=False),
// so rank 0 of the job hosts the TCPStore at MASTER_ADDR:MASTER_PORT.
// `inherited` answers getenv for the launcher's own environment.
template <typename Getenv>
std::vector<std::pair<std::string, std::string>> worker_env(const LaunchConfig& c, int local_rank,
                                                            int restart_count, Getenv inherited) {
  int world = c.nnodes * c.nproc_per_node;
  int rank = c.node_rank * c.nproc_per_node + local_rank;
  std::vector<std::pair<std::string, std::string>> env = {
      {"LOCAL_RANK", std::to_string(local_rank)},
      {"RANK", std::to_string(rank)},
      {"GROUP_RANK", std::to_string(c.node_rank)},
      {"ROLE_RANK", std::to_string(rank)},
      {"ROLE_NAME", c.role},
      {"LOCAL_WORLD_SIZE", std::to_string(c.nproc_per_node)},
      {"WORLD_SIZE", std::to_string(world)},
      {"GROUP_WORLD_SIZE", std::to_string(c.nnodes)},
      {"ROLE_WORLD_SIZE", std::to_string(world)},
      {"MASTER_ADDR", c.master_addr},
      {"MASTER_PORT", std::to_string(c.master_port)},
      {"TORCHELASTIC_RESTART_COUNT", std::to_string(restart_count)},
      {"TORCHELASTIC_MAX_RESTARTS", std::to_string(c.max_restarts)},
      {"TORCHELASTIC_RUN_ID", c.run_id},
      {"TORCHELASTIC_USE_AGENT_STORE", "False"},
  };
  const char* nccl = inherited("TORCH_NCCL_ASYNC_ERROR_HANDLING");
  env.emplace_back("TORCH_NCCL_ASYNC_ERROR_HANDLING", nccl ? nccl : "1");
  // torchrun sets OMP_NUM_THREADS=1 for its workers when it is unset and there is more than one.
  if (!inherited("OMP_NUM_THREADS") && c.nproc_per_node > 1) env.emplace_back("OMP_NUM_THREADS", "1");
  return env;
}

}  // namespace ember::dist::launcher
