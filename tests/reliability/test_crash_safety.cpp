// Crash safety of checkpoint writes (core/atomic_file.h, optim/checkpoint.h): a process
// SIGKILLed at 100 random points while it saves checkpoints in a loop, a save that hits the
// file-size limit or a full disk, saving over the file just loaded (safetensors#762), and the
// clean-up of temporaries that killed processes leave behind. Each case checks that the file
// on disk is always one complete version, never a mix.
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <random>
#include <thread>

#include "ember/core/atomic_file.h"
#include "ember/core/serialize.h"
#include "ember/nn/modules/linear.h"
#include "ember/optim/adam.h"
#include "ember/optim/checkpoint.h"
#include "ember/optim/sgd.h"
#include "op_check.h"
#include "temp_dir.h"

namespace fs = std::filesystem;
using namespace ember;
using namespace ember::test;
using Dict = OrderedDict<std::string, Tensor>;

namespace {

/// Forks a child that runs `body` and exits with its return value (2 if it throws). The
/// child runs ember single-threaded: OpenMP's worker threads do not survive fork().
template <class F>
pid_t fork_child(F&& body) {
  std::fflush(nullptr);  // the child must not inherit (and repeat) buffered output
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    int code = 2;
    try {
      set_num_threads(1);
      code = body();
    } catch (...) {
    }
    ::_exit(code);
  }
  return pid;
}

int wait_exit_code(pid_t pid) {
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  return WEXITSTATUS(status);
}

/// A model and an Adam optimizer with state, whose every number can be set to one value:
/// version v of a checkpoint holds v in every parameter and every optimizer state tensor,
/// and v as its step, so a loaded file shows at once whether it is one whole version.
struct Versioned {
  nn::Linear net{nullptr};
  std::unique_ptr<optim::Adam> opt;
  explicit Versioned(int64_t in = 96, int64_t out = 96) {
    net = nn::Linear(in, out);
    opt = std::make_unique<optim::Adam>(net->parameters(), optim::AdamOptions(1e-3));
    net->forward(ones({2, in})).sum().backward();
    opt->step();  // creates exp_avg, exp_avg_sq and step for each parameter
  }
  void set(double v) {
    NoGradGuard no_grad;
    for (Tensor& p : net->parameters()) p.fill_(v);
    for (auto& [key, state] : opt->state())  // named_tensors() may hold copies ("step"): set each
      for (const auto& [name, t] : state->named_tensors()) state->set_named_tensor(name, full_like(t, v));
  }
  void save(const std::string& path, int64_t v) {
    set(static_cast<double>(v));
    optim::save_checkpoint(path, *net, *opt, optim::CheckpointInfo().step(v));
  }
};

/// The version a checkpoint holds, after checking that every number in it is that version.
int64_t loaded_version(const std::string& path, int64_t in = 96, int64_t out = 96) {
  Versioned fresh(in, out);
  fresh.set(-1);
  int64_t v = optim::load_checkpoint(path, *fresh.net, *fresh.opt).step();
  size_t checked = 0;
  for (const Tensor& p : fresh.net->parameters()) {
    CHECK(p.eq(static_cast<double>(v)).all().item<bool>());
    ++checked;
  }
  for (auto& [key, state] : fresh.opt->state())
    for (auto& [name, t] : state->named_tensors()) {
      INFO("optimizer state " << name);
      CHECK(t.eq(static_cast<double>(v)).all().item<bool>());
      ++checked;
    }
  CHECK(checked == 2 + 2 * 3);  // weight, bias; exp_avg, exp_avg_sq, step of each
  return v;
}

}  // namespace

TEST_CASE(
    "test_crash_safety: SIGKILL at 100 random points of a save loop always leaves one whole checkpoint") {
  TempDir tmp;
  const std::string path = tmp / "ckpt.safetensors";
  Versioned model;
  model.save(path, 0);
  // The kill delays span a few saves (measured here, so the test fits slow and fast disks).
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 3; ++i) model.save(path, 0);
  const double save_us =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / 3;
  std::mt19937 rng(20240611);
  std::uniform_real_distribution<double> delay_us(0.0, 3.0 * save_us + 200.0);

  int64_t on_disk = 0;  // the version the file held when the trial started
  int mid_write = 0, stale_seen = 0;
  for (int trial = 0; trial < 100; ++trial) {
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    const int64_t first = on_disk + 1;
    pid_t pid = fork_child([&] {
      ::close(fds[0]);
      for (int64_t v = first;; ++v) {  // each completed save is reported on the pipe
        model.save(path, v);
        if (::write(fds[1], &v, sizeof v) != static_cast<ssize_t>(sizeof v)) return 3;
      }
    });
    ::close(fds[1]);
    std::this_thread::sleep_for(std::chrono::microseconds(static_cast<int64_t>(delay_us(rng))));
    REQUIRE(::kill(pid, SIGKILL) == 0);
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    REQUIRE(WIFSIGNALED(status));  // it was still saving: the loop never ends by itself
    int64_t reported = on_disk, v = 0;
    while (::read(fds[0], &v, sizeof v) == static_cast<ssize_t>(sizeof v)) reported = v;
    ::close(fds[0]);

    INFO("trial " << trial << ": last save reported complete " << reported);
    const std::string partial = path + ".tmp." + std::to_string(pid);
    if (fs::exists(partial)) ++mid_write;
    // The file is the last reported version, or the next one when the kill fell between its
    // rename and the report.
    int64_t got = loaded_version(path);
    CHECK((got == reported || got == reported + 1));
    // The previous trial's child is dead: once this one has saved, its partial file is gone.
    if (reported > on_disk)
      for (const std::string& name : tmp.others("ckpt.safetensors"))
        if (name != fs::path(partial).filename().string()) ++stale_seen;
    on_disk = got;
  }
  MESSAGE(mid_write << " of 100 kills left a partial temporary file (killed mid-write); save took ~"
                    << static_cast<int64_t>(save_us) << " us");
  CHECK(stale_seen == 0);
  // One more save by a live process removes the last dead child's temporary too.
  model.save(path, on_disk + 1);
  CHECK(tmp.others("ckpt.safetensors").empty());
  CHECK(loaded_version(path) == on_disk + 1);
}

TEST_CASE(
    "test_crash_safety: the file-size limit (RLIMIT_FSIZE) fails the save with 'File too large', old file "
    "intact") {
  TempDir tmp;
  const std::string path = tmp / "ckpt.safetensors";
  Versioned small(8, 8);
  small.save(path, 1);
  const auto old_size = static_cast<rlim_t>(fs::file_size(path));
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  // The child's limit lets it write the small file's size, not the big model's.
  pid_t pid = fork_child([&] {
    ::close(fds[0]);
    std::signal(SIGXFSZ, SIG_IGN);  // else the kernel kills the writer; ignored, write gets EFBIG
    rlimit lim{old_size + 1024, old_size + 1024};
    if (::setrlimit(RLIMIT_FSIZE, &lim) != 0) return 4;
    Versioned big(256, 256);
    try {
      big.save(path, 2);
    } catch (const Error& e) {
      std::string what = e.what();
      (void)!::write(fds[1], what.data(), what.size());
      return 0;
    }
    return 5;  // the save succeeded: the limit did not apply
  });
  ::close(fds[1]);
  std::string what(4096, '\0');
  ssize_t n = ::read(fds[0], what.data(), what.size());
  ::close(fds[0]);
  REQUIRE(wait_exit_code(pid) == 0);
  what.resize(static_cast<size_t>(std::max<ssize_t>(n, 0)));
  CHECK(what.find("cannot write '" + path + "'") != std::string::npos);
  CHECK(what.find("File too large") != std::string::npos);
  CHECK(loaded_version(path, 8, 8) == 1);
  CHECK(tmp.others("ckpt.safetensors").empty());  // the partial temporary was removed
}

TEST_CASE(
    "test_crash_safety: a full disk (8 MiB tmpfs) fails the save with 'No space left on device', old file "
    "intact") {
  TempDir tmp;
  const std::string mnt = tmp / "tiny";
  fs::create_directories(mnt);
  if (::mount("tmpfs", mnt.c_str(), "tmpfs", 0, "size=8m") != 0) {
    MESSAGE("skipped: cannot mount a tmpfs here (" << std::strerror(errno)
                                                   << "; needs root with CAP_SYS_ADMIN)");
    return;
  }
  struct Unmount {
    std::string dir;
    ~Unmount() { ::umount2(dir.c_str(), MNT_DETACH); }
  } unmount{mnt};
  const std::string path = mnt + "/ckpt.safetensors";
  Versioned small(64, 64);
  small.save(path, 1);
  // 1500 x 1500 float32 weights with Adam's two moments: about 27 MB, over the 8 MiB limit.
  Versioned big(1500, 1500);
  check_error([&] { big.save(path, 2); }, "No space left on device");
  CHECK(loaded_version(path, 64, 64) == 1);
  std::vector<std::string> left;
  for (const auto& e : fs::directory_iterator(mnt)) left.push_back(e.path().filename().string());
  CHECK(left == std::vector<std::string>{"ckpt.safetensors"});  // the space is given back
  small.save(path, 3);                                          // and the next save that fits works
  CHECK(loaded_version(path, 64, 64) == 3);
}

TEST_CASE("test_crash_safety: saving over the file just loaded works (safetensors#762)") {
  // safetensors#762: on some platforms the loaded tensors map the file, and writing over it
  // fails or corrupts them. ember's loaded tensors own their memory; the rename replaces the
  // file while they (and any open reader) keep their bytes.
  TempDir tmp;
  const std::string path = tmp / "w.safetensors";
  Dict d;
  d.insert("a", arange(12, kFloat).view({3, 4}));
  d.insert("b", full({5}, 7.0, kDouble));
  save_file(d, path);
  Dict loaded = load_file(path);
  Dict changed;
  changed.insert("a", loaded["a"] * 2);
  changed.insert("b", loaded["b"]);  // a tensor read from the file being replaced
  changed.insert("c", loaded["a"].sum().view({1}));
  save_file(changed, path);
  check_close(loaded["a"], arange(12, kFloat).view({3, 4}), 0, 0);  // unchanged by the save
  Dict back = load_file(path);
  REQUIRE(back.size() == 3);
  check_close(back["a"], arange(12, kFloat).view({3, 4}) * 2, 0, 0);
  check_close(back["b"], full({5}, 7.0, kDouble), 0, 0);
  check_close(back["c"], {66.0}, 0, 0);
  // The same with a checkpoint: load into the objects, train on, save to the same path.
  Versioned m;
  m.save(path, 4);
  Versioned resumed;
  CHECK(optim::load_checkpoint(path, *resumed.net, *resumed.opt).step() == 4);
  resumed.save(path, 5);
  CHECK(loaded_version(path) == 5);
  // And libtorch's spelling, saving a tensor loaded from the path back over it.
  const std::string one = tmp / "t.safetensors";
  save(arange(6, kDouble), one);
  Tensor t;
  load(t, one);
  save(t * 3, one);
  check_close(t, {0, 1, 2, 3, 4, 5}, 0, 0);
  Tensor t2;
  load(t2, one);
  check_close(t2, {0, 3, 6, 9, 12, 15}, 0, 0);
}

TEST_CASE("test_crash_safety: a save removes the temporaries of dead processes, and only those") {
  TempDir tmp;
  const std::string path = tmp / "m.safetensors";
  // A pid that is certainly dead: a child that exited and was reaped.
  pid_t dead = fork_child([] { return 0; });
  REQUIRE(wait_exit_code(dead) == 0);
  // A live one: a child blocked on a pipe until the test ends.
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  pid_t alive = fork_child([&] {
    ::close(fds[1]);
    char c;
    (void)!::read(fds[0], &c, 1);
    return 0;
  });
  ::close(fds[0]);
  auto touch = [&](const std::string& name) {
    std::FILE* f = std::fopen((tmp / name).c_str(), "wb");
    REQUIRE(f != nullptr);
    std::fputs("partial", f);
    std::fclose(f);
  };
  const std::string d = std::to_string(dead), a = std::to_string(alive), me = std::to_string(::getpid());
  for (const std::string& name :
       {"m.safetensors.tmp." + d, "m.safetensors.tmp." + d + ".2", "m.safetensors.tmp." + a,
        "m.safetensors.tmp." + me + ".7", "other.safetensors.tmp." + d, "m.safetensors.tmp." + d + "x",
        std::string("m.safetensors.tmp."), "m.safetensors.tmp.-" + d})
    touch(name);
  Dict w;
  w.insert("w", ones({2}));
  save_file(w, path);
  std::vector<std::string> left = tmp.others("m.safetensors");
  std::sort(left.begin(), left.end());
  std::vector<std::string> want = {
      "m.safetensors.tmp.",           "m.safetensors.tmp.-" + d,        "m.safetensors.tmp." + a,
      "m.safetensors.tmp." + d + "x", "m.safetensors.tmp." + me + ".7", "other.safetensors.tmp." + d};
  std::sort(want.begin(), want.end());
  CHECK(left == want);  // the dead pid's two files are gone; live, own and foreign names stay
  ::close(fds[1]);      // releases the live child
  CHECK(wait_exit_code(alive) == 0);
  check_close(load_file(path)["w"], {1.0, 1.0}, 0, 0);
}

TEST_CASE("test_crash_safety: threads saving one path at once never share a temporary file") {
  // Before per-writer names, two threads of one process truncated and interleaved their
  // bytes in the same "<path>.tmp.<pid>"; the file renamed into place could mix them.
  TempDir tmp;
  const std::string path = tmp / "shared.safetensors";
  constexpr int kThreads = 4, kSaves = 25;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      Dict d;
      d.insert("x", full({20000}, static_cast<double>(t), kFloat));
      d.insert("id", full({1}, static_cast<double>(t), kFloat));
      for (int i = 0; i < kSaves; ++i) {
        try {
          save_file(d, path);
        } catch (const std::exception&) {
          ++failures;
        }
      }
    });
  for (auto& th : threads) th.join();
  CHECK(failures.load() == 0);
  Dict back = load_file(path);
  const double id = back["id"].item<double>();
  CHECK(back["x"].eq(id).all().item<bool>());  // one writer's file, whole
  CHECK(tmp.others("shared.safetensors").empty());
}

TEST_CASE("test_crash_safety: loading while another thread saves sees one whole version every time") {
  // load_checkpoint reads metadata (the step) and tensors through one open of the file; read
  // separately, a rename between the two reads would pair one version's step with another's
  // tensors.
  TempDir tmp;
  const std::string path = tmp / "live.safetensors";
  Versioned writer_model(32, 32);
  writer_model.save(path, 0);
  std::atomic<bool> stop{false};
  std::atomic<int64_t> written{0};
  std::thread writer([&] {
    for (int64_t v = 1; !stop.load(); ++v) {
      writer_model.save(path, v);
      written = v;
    }
  });
  int64_t last = 0;
  int loads = 0;
  for (; loads < 200 || written.load() < 25; ++loads) {  // over many renames (a save fsyncs)
    int64_t v = loaded_version(path, 32, 32);            // checks every tensor holds the step's value
    CHECK(v >= last);                                    // versions only move forward
    last = v;
  }
  stop = true;
  writer.join();
  MESSAGE(loads << " loads saw versions up to " << last << " of " << written.load() << " written");
}

TEST_CASE("test_crash_safety: a save keeps the replaced file's permission bits") {
  // The temporary is created 0644 (less the umask); renamed over a file made private, it
  // would have published the new checkpoint to everyone.
  TempDir tmp;
  const std::string path = tmp / "private.safetensors";
  Dict w;
  w.insert("w", ones({3}));
  save_file(w, path);
  fs::permissions(path, fs::perms::owner_read | fs::perms::owner_write, fs::perm_options::replace);
  save_file(w, path);
  CHECK((fs::status(path).permissions() & fs::perms::all) ==
        (fs::perms::owner_read | fs::perms::owner_write));
  fs::permissions(path, fs::perms::owner_all | fs::perms::group_read, fs::perm_options::replace);
  save_file(w, path);
  CHECK((fs::status(path).permissions() & fs::perms::all) == (fs::perms::owner_all | fs::perms::group_read));
}
