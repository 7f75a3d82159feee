// ember-run: torchrun's launcher for ember programs. Starts --nproc-per-node copies of a
// program with torchrun's environment (RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR, ...),
// prefixes each worker's output lines with "[default<local_rank>]:", forwards SIGINT/SIGTERM/
// SIGHUP/SIGQUIT, stops the group when a worker fails (SIGTERM, then SIGKILL after
// --stop-timeout), restarts it up to --max-restarts times, and exits with the failing worker's
// code. Plain POSIX (fork/exec, pipes, poll, waitpid); it does not link ember.
//
// One thread: signal handlers only write the signal number into a self-pipe, and the poll loop
// reads it, so no work happens inside a handler and every wait wakes up on a signal.
#include "line_prefixer.h"
#include "launch_config.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

namespace {

using namespace ember::dist::launcher;
using Clock = std::chrono::steady_clock;

constexpr const char* kUsage = R"(usage: ember-run [options] program [args...]

Starts --nproc-per-node workers of `program args...` on this node with torchrun's environment:
RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, GROUP_RANK, GROUP_WORLD_SIZE, ROLE_RANK,
ROLE_NAME, ROLE_WORLD_SIZE, MASTER_ADDR, MASTER_PORT, TORCHELASTIC_RESTART_COUNT,
TORCHELASTIC_MAX_RESTARTS, TORCHELASTIC_RUN_ID, TORCHELASTIC_USE_AGENT_STORE=False, and
OMP_NUM_THREADS=1 when it is unset and there is more than one worker. Each output line of a
worker is prefixed with "[<role><local_rank>]:" (or TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE,
with ${role_name}, ${rank}, ${local_rank}). When a worker fails, the others get SIGTERM (SIGKILL
after --stop-timeout) and ember-run exits with the failing worker's exit code (128+N when it
was killed by signal N), after restarting the group --max-restarts times.

options (the underscore spellings, e.g. --nproc_per_node, work too):
  --nproc-per-node N     workers on this node (a number, or "cpu"; default 1)
  --nnodes M             nodes in the job (default 1; elastic MIN:MAX is not supported)
  --node-rank K          this node's rank, 0..M-1 (default 0); RANK = K*N + LOCAL_RANK
  --master-addr A        MASTER_ADDR (default 127.0.0.1)
  --master-port P        MASTER_PORT (default 29500)
  --standalone           single node; MASTER_PORT is a free port, TORCHELASTIC_RUN_ID a uuid
  --max-restarts R       restart the whole group up to R times after a failure (default 0)
  --monitor-interval S   seconds between checks of the workers' state (default 0.1)
  --stop-timeout S       seconds between SIGTERM and SIGKILL when stopping (default 30)
  --rdzv-id ID           TORCHELASTIC_RUN_ID (default "none")
  --role NAME            ROLE_NAME and the log prefix's role (default "default")
  --local-ranks-filter L show only these local ranks' output, e.g. 0,1
  --no-python            accepted for torchrun compatibility (the program always runs as is)

Multi-node jobs: start ember-run on every node with the same --nnodes, --master-addr and
--master-port and each node's --node-rank; the launchers do not talk to each other (static
ranks). torchrun's elastic c10d rendezvous between launchers is not built.
)";

int g_signal_pipe[2] = {-1, -1};

void on_signal(int sig) {
  int saved = errno;
  unsigned char b = static_cast<unsigned char>(sig);
  ssize_t ignored = write(g_signal_pipe[1], &b, 1);  // full pipe: the wake-up is already pending
  (void)ignored;
  errno = saved;
}

constexpr int kForwardedSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

std::string signal_name(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return abbrev ? std::string("SIG") + abbrev : "signal " + std::to_string(sig);
}

void install_handlers() {
  if (pipe2(g_signal_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
    perror("ember-run: pipe2");
    std::exit(1);
  }
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
  sigaction(SIGCHLD, &sa, nullptr);
  for (int sig : kForwardedSignals) sigaction(sig, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);  // a closed stdout shows up as EPIPE, not as our death
  // Orphans of the workers become our children and are reaped here, not left as zombies
  // under an init that does not reap (containers).
  prctl(PR_SET_CHILD_SUBREAPER, 1);
}

// Writes everything, retrying after EINTR and partial writes; gives up silently on a closed
// or failing destination (the workers must still be supervised).
void write_all(int fd, std::string& buf) {
  size_t off = 0;
  while (off < buf.size()) {
    ssize_t n = write(fd, buf.data() + off, buf.size() - off);
    if (n > 0) {
      off += static_cast<size_t>(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && errno == EAGAIN) {
      pollfd p{fd, POLLOUT, 0};
      poll(&p, 1, 100);
    } else {
      break;
    }
  }
  buf.clear();
}

void say(const std::string& msg) {
  std::string line = "ember-run: " + msg + "\n";
  write_all(STDERR_FILENO, line);
}

struct Stream {
  int fd = -1;
  int dest = STDOUT_FILENO;
  bool shown = true;
  LinePrefixer prefixer{""};
};

struct Worker {
  int local_rank = 0;
  int rank = 0;
  pid_t pid = -1;
  bool alive = false;
  int status = 0;
  time_t end_time = 0;
  Stream out, err;
};

struct Failure {
  int local_rank, rank;
  pid_t pid;
  int status;
  time_t when;
};

int exit_code_of(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

bool failed(int status) { return !(WIFEXITED(status) && WEXITSTATUS(status) == 0); }

// Reads what is available on one stream (one read, or until empty with `drain`) and writes
// the completed lines; closes the stream at end of file.
void pump(Stream& s, bool drain) {
  char buf[65536];
  std::string out;
  while (s.fd >= 0) {
    ssize_t n = read(s.fd, buf, sizeof buf);
    if (n > 0) {
      s.prefixer.feed(std::string_view(buf, static_cast<size_t>(n)), out);
      if (s.shown) write_all(s.dest, out);
      out.clear();
      if (!drain) return;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return;
    s.prefixer.finish(out);  // EOF or a read error: the stream is over
    if (s.shown) write_all(s.dest, out);
    close(s.fd);
    s.fd = -1;
  }
}

// Runs in the forked child with every signal blocked, so none reaches the launcher's handlers
// (which would write into the launcher's signal pipe) before the defaults are back.
[[noreturn]] void exec_worker(const LaunchConfig& c, const Worker& w, int restart_count, int out_fd, int err_fd,
                              pid_t launcher, const sigset_t& mask) {
  for (int sig : kForwardedSignals) signal(sig, SIG_DFL);
  signal(SIGCHLD, SIG_DFL);
  signal(SIGPIPE, SIG_DFL);
  close(g_signal_pipe[0]);
  close(g_signal_pipe[1]);
  setpgid(0, 0);  // own group: the launcher's signals reach the worker's children too
  prctl(PR_SET_PDEATHSIG, SIGKILL);  // no orphaned worker if the launcher itself is killed
  if (getppid() != launcher) _exit(1);  // it died before prctl took effect
  sigprocmask(SIG_SETMASK, &mask, nullptr);
  if (dup2(out_fd, STDOUT_FILENO) < 0 || dup2(err_fd, STDERR_FILENO) < 0) _exit(127);
  for (const auto& [key, value] : worker_env(c, w.local_rank, restart_count, std::getenv))
    setenv(key.c_str(), value.c_str(), 1);
  std::vector<char*> argv;
  for (const std::string& a : c.program) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  execvp(argv[0], argv.data());
  std::string msg = "ember-run: cannot execute '" + c.program[0] + "': " + std::strerror(errno) + "\n";
  ssize_t ignored = write(STDERR_FILENO, msg.data(), msg.size());
  (void)ignored;
  _exit(127);
}

void close_streams(Worker& w) {
  for (Stream* s : {&w.out, &w.err})
    if (s->fd >= 0) {
      close(s->fd);
      s->fd = -1;
    }
}

bool open_stream(Stream& s, int fds[2]) {
  if (pipe2(fds, O_CLOEXEC) != 0) return false;
  s.fd = fds[0];
  fcntl(s.fd, F_SETFL, fcntl(s.fd, F_GETFL) | O_NONBLOCK);
  return true;
}

std::string prefix_for(const LaunchConfig& c, int rank, int local_rank) {
  const char* tmpl = std::getenv("TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE");
  return expand_prefix_template(tmpl && *tmpl ? tmpl : kDefaultPrefixTemplate, c.role, rank, local_rank);
}

// Starts the group; a worker that cannot be forked counts as failed with exit code 1.
std::vector<Worker> spawn_group(const LaunchConfig& c, int restart_count) {
  std::vector<Worker> workers(static_cast<size_t>(c.nproc_per_node));
  for (int lr = 0; lr < c.nproc_per_node; ++lr) {
    Worker& w = workers[static_cast<size_t>(lr)];
    w.local_rank = lr;
    w.rank = c.node_rank * c.nproc_per_node + lr;
    std::string prefix = prefix_for(c, w.rank, lr);
    w.out.prefixer = LinePrefixer(prefix);
    w.err.prefixer = LinePrefixer(prefix);
    w.err.dest = STDERR_FILENO;
    bool shown = c.local_ranks_filter.empty() ||
                 std::find(c.local_ranks_filter.begin(), c.local_ranks_filter.end(), lr) != c.local_ranks_filter.end();
    w.out.shown = w.err.shown = shown;
    int out_fds[2], err_fds[2];
    if (!open_stream(w.out, out_fds) || !open_stream(w.err, err_fds)) {
      say(std::string("pipe2: ") + std::strerror(errno));
      if (w.out.fd >= 0) close(out_fds[1]);
      close_streams(w);
      w.status = 1 << 8;
      w.end_time = time(nullptr);
      continue;
    }
    pid_t launcher = getpid();
    sigset_t all, mask;
    sigfillset(&all);
    sigprocmask(SIG_BLOCK, &all, &mask);
    pid_t pid = fork();
    if (pid == 0) exec_worker(c, w, restart_count, out_fds[1], err_fds[1], launcher, mask);
    sigprocmask(SIG_SETMASK, &mask, nullptr);
    close(out_fds[1]);
    close(err_fds[1]);
    if (pid < 0) {
      say(std::string("fork: ") + std::strerror(errno));
      w.status = 1 << 8;
      w.end_time = time(nullptr);
      continue;
    }
    setpgid(pid, pid);  // also here, so a signal sent right after fork finds the group
    w.pid = pid;
    w.alive = true;
  }
  return workers;
}

enum class Outcome { kSucceeded, kWorkerFailed, kSignaled };

struct GroupResult {
  Outcome outcome = Outcome::kSucceeded;
  std::vector<Failure> failures;  // in the order observed; the first is the root cause
  int signal = 0;
};

class GroupRunner {
 public:
  GroupRunner(const LaunchConfig& c, int restart_count) : c_(c), restart_count_(restart_count) {}

  GroupResult run() {
    workers_ = spawn_group(c_, restart_count_);
    for (Worker& w : workers_)
      if (!w.alive) record_failure(w);
    if (!result_.failures.empty()) begin_stop(SIGTERM);
    while (any_alive()) {
      wait_for_events();
      handle_signals();
      reap();
      if (stopping_ && !killed_ && Clock::now() >= deadline_) {
        signal_all(SIGKILL);
        killed_ = true;
      }
    }
    for (Worker& w : workers_) {
      pump(w.out, true);
      pump(w.err, true);
      close_streams(w);
    }
    if (stopping_) {
      // Children the workers left in their groups are stopped with them (no orphan from a
      // stopped attempt runs on into the next one).
      signal_all(SIGKILL);
      reap_leftovers(std::chrono::seconds(1));
    }
    return result_;
  }

 private:
  bool any_alive() const {
    return std::any_of(workers_.begin(), workers_.end(), [](const Worker& w) { return w.alive; });
  }

  // Polls the self-pipe and every open stream, at most one monitor interval (or until the
  // stop deadline).
  void wait_for_events() {
    std::vector<pollfd> fds{{g_signal_pipe[0], POLLIN, 0}};
    std::vector<Stream*> streams;
    for (Worker& w : workers_)
      for (Stream* s : {&w.out, &w.err})
        if (s->fd >= 0) {
          fds.push_back({s->fd, POLLIN, 0});
          streams.push_back(s);
        }
    auto wait = std::chrono::duration<double>(std::min(c_.monitor_interval, 3600.0));  // fits poll's int ms
    if (stopping_ && !killed_) wait = std::min<std::chrono::duration<double>>(wait, deadline_ - Clock::now());
    int timeout_ms = std::max(0, static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(wait).count()) + 1);
    int n = poll(fds.data(), fds.size(), timeout_ms);
    if (n <= 0) return;  // timeout or EINTR: the caller checks everything anyway
    for (size_t i = 1; i < fds.size(); ++i)
      if (fds[i].revents != 0) pump(*streams[i - 1], false);
  }

  void handle_signals() {
    unsigned char sigs[64];
    for (;;) {
      ssize_t n = read(g_signal_pipe[0], sigs, sizeof sigs);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return;
      for (ssize_t i = 0; i < n; ++i) {
        int sig = sigs[i];
        if (sig == SIGCHLD) continue;
        ++signals_received_;
        if (signals_received_ == 1) {
          result_.outcome = Outcome::kSignaled;
          result_.signal = sig;
          say("received " + signal_name(sig) + ", forwarding it to the workers");
          begin_stop(sig);
        } else if (!killed_) {
          say("received " + signal_name(sig) + " again, killing the workers");
          signal_all(SIGKILL);
          killed_ = true;
        }
      }
    }
  }

  // Reaps every child that exited: the workers, and (the launcher being a subreaper) any
  // orphaned children of theirs, so none is left a zombie.
  void reap() {
    for (;;) {
      int status = 0;
      pid_t pid = waitpid(-1, &status, WNOHANG);
      if (pid < 0 && errno == EINTR) continue;
      if (pid <= 0) break;  // none exited (0) or no children left (ECHILD)
      auto it = std::find_if(workers_.begin(), workers_.end(), [pid](const Worker& w) { return w.pid == pid; });
      if (it == workers_.end() || !it->alive || !(WIFEXITED(status) || WIFSIGNALED(status))) continue;
      Worker& w = *it;
      w.alive = false;
      w.status = status;
      w.end_time = time(nullptr);
      // Everything the worker wrote before exiting is in the pipe now; output of children
      // it left behind after that is not waited for.
      pump(w.out, true);
      pump(w.err, true);
      close_streams(w);
      if (failed(w.status) && !stopping_) record_failure(w);
    }
    if (!result_.failures.empty() && !stopping_) begin_stop(SIGTERM);
  }

  // Reaps killed orphans until none is left, for at most `limit` (one that escaped the
  // workers' groups may run on; it is not waited for).
  static void reap_leftovers(std::chrono::milliseconds limit) {
    auto end = Clock::now() + limit;
    for (;;) {
      pid_t pid = waitpid(-1, nullptr, WNOHANG);
      if (pid > 0 || (pid < 0 && errno == EINTR)) continue;
      if (pid < 0 || Clock::now() >= end) return;
      usleep(5000);
    }
  }

  void record_failure(const Worker& w) {
    if (result_.outcome == Outcome::kSucceeded) result_.outcome = Outcome::kWorkerFailed;
    result_.failures.push_back({w.local_rank, w.rank, w.pid, w.status, w.end_time});
  }

  void begin_stop(int sig) {
    if (!stopping_) deadline_ = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                                   std::chrono::duration<double>(c_.stop_timeout));
    stopping_ = true;
    signal_all(sig);
  }

  // Signals every worker's process group, the exited ones' too: children a failed worker left
  // behind are stopped with the rest.
  void signal_all(int sig) {
    for (Worker& w : workers_)
      if (w.pid > 0) killpg(w.pid, sig);
  }

  const LaunchConfig& c_;
  int restart_count_;
  std::vector<Worker> workers_;
  GroupResult result_;
  bool stopping_ = false;
  bool killed_ = false;
  int signals_received_ = 0;
  Clock::time_point deadline_{};
};

std::string hostname() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "<N/A>";
  return buf;
}

// torchrun's ChildFailedError message (elastic/multiprocessing/errors): the root cause (first
// observed failure) and the others, with time, host, rank, exit code (negative for a signal, as
// Python's Popen reports it) and pid.
void print_failure_summary(const LaunchConfig& c, const std::vector<Failure>& failures) {
  auto format = [&](size_t idx, const Failure& f) {
    char when[64];
    struct tm tm {};
    localtime_r(&f.when, &tm);
    strftime(when, sizeof when, "%Y-%m-%d_%H:%M:%S", &tm);
    int code = WIFSIGNALED(f.status) ? -WTERMSIG(f.status) : exit_code_of(f.status);
    std::string message = WIFSIGNALED(f.status)
        ? "Signal " + std::to_string(WTERMSIG(f.status)) + " (" + signal_name(WTERMSIG(f.status)) +
              ") received by PID " + std::to_string(f.pid)
        : std::string("To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html");
    return "[" + std::to_string(idx) + "]:\n  time      : " + when + "\n  host      : " + hostname() +
           "\n  rank      : " + std::to_string(f.rank) + " (local_rank: " + std::to_string(f.local_rank) +
           ")\n  exitcode  : " + std::to_string(code) + " (pid: " + std::to_string(f.pid) +
           ")\n  error_file: <N/A>\n  traceback : " + message;
  };
  std::string title = c.program[0] + " FAILED";
  size_t width = title.size();
  std::string root = format(0, failures[0]);
  std::vector<std::string> others;
  for (size_t i = 1; i < failures.size(); ++i) others.push_back(format(i, failures[i]));
  auto widen = [&width](const std::string& block) {
    for (size_t start = 0; start < block.size();) {
      size_t end = std::min(block.find('\n', start), block.size());
      width = std::max(width, end - start);
      start = end + 1;
    }
  };
  widen(root);
  for (const std::string& o : others) widen(o);
  width = std::min<size_t>(width, 60);
  std::string msg = "\n" + std::string(width, '=') + "\n" + title + "\n" + std::string(width, '-') + "\nFailures:\n";
  if (others.empty()) msg += "  <NO_OTHER_FAILURES>\n";
  for (const std::string& o : others) msg += o + "\n";
  msg += std::string(width, '-') + "\nRoot Cause (first observed failure):\n" + root + "\n" + std::string(width, '=') + "\n";
  write_all(STDERR_FILENO, msg);
}

int free_port() {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  int port = -1;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0)
    port = ntohs(addr.sin_port);
  close(fd);
  return port;
}

std::string random_uuid4() {
  unsigned char b[16] = {};
  int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    ssize_t ignored = read(fd, b, sizeof b);
    (void)ignored;
    close(fd);
  }
  b[6] = static_cast<unsigned char>((b[6] & 0x0f) | 0x40);
  b[8] = static_cast<unsigned char>((b[8] & 0x3f) | 0x80);
  char out[37];
  std::snprintf(out, sizeof out, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
                b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
  return out;
}

// A termination signal that arrived while no group was running (0: none).
int pending_signal() {
  unsigned char sigs[64];
  int found = 0;
  for (;;) {
    ssize_t n = read(g_signal_pipe[0], sigs, sizeof sigs);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return found;
    for (ssize_t i = 0; i < n; ++i)
      if (sigs[i] != SIGCHLD && found == 0) found = sigs[i];
  }
}

}  // namespace

int main(int argc, char** argv) {
  ParseResult parsed = parse_launch_args(std::vector<std::string>(argv + 1, argv + argc));
  if (parsed.config.help) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (!parsed.error.empty()) {
    std::fprintf(stderr, "%s\nember-run: error: %s\n", kUsage, parsed.error.c_str());
    return 2;
  }
  LaunchConfig c = parsed.config;
  if (c.standalone) {
    c.master_addr = "127.0.0.1";
    c.master_port = free_port();
    c.run_id = random_uuid4();
    if (c.master_port < 0) {
      std::perror("ember-run: finding a free port");
      return 1;
    }
  }
  if (!std::getenv("OMP_NUM_THREADS") && c.nproc_per_node > 1)
    std::fputs("\n*****************************************\n"
               "Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to avoid "
               "your system being overloaded, please further tune the variable for optimal performance in "
               "your application as needed. \n*****************************************\n",
               stderr);
  std::fflush(stderr);
  install_handlers();

  for (int restart_count = 0;; ++restart_count) {
    GroupResult r = GroupRunner(c, restart_count).run();
    if (r.outcome == Outcome::kSucceeded) return 0;
    if (!r.failures.empty()) print_failure_summary(c, r.failures);
    if (r.outcome == Outcome::kSignaled) return 128 + r.signal;
    int left = c.max_restarts - restart_count;
    if (left <= 0) return exit_code_of(r.failures[0].status);
    say("[" + c.role + "] Worker group FAILED. " + std::to_string(left) + "/" + std::to_string(c.max_restarts) +
        " attempts left; will restart worker group");
    if (int sig = pending_signal()) return 128 + sig;
  }
}
