// torch.distributed's module-level API (dist/distributed.h): the rendezvous of
// init_process_group, the process-wide group registry, and the free-function collectives.
#include "ember/dist/distributed.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>
#include <utility>

#include "ember/dist/file_store.h"
#include "ember/dist/prefix_store.h"
#include "ember/dist/process_group_gloo.h"
#include "ember/dist/process_group_nccl.h"
#include "ember/dist/tcp_store.h"

namespace ember::dist {

namespace {

constexpr const char* kNotInitialized =
    "Default process group has not been initialized, please make sure to call init_process_group.";

// A group and what init_process_group/new_group knew when making it.
struct GroupInfo {
  std::vector<int> global_ranks;  // group rank -> global rank
  std::string backend;
};

struct Registry {
  std::mutex mutex;
  ProcessGroupPtr world;
  std::shared_ptr<Store> store;  // the default store, which new_group prefixes
  std::string backend;
  int global_rank = -1;
  int world_size = -1;
  int groups_made = 0;  // names later groups' store prefixes, the same on every rank
  std::map<const ProcessGroup*, GroupInfo> groups;
};

Registry& registry() {
  static Registry r;
  return r;
}

std::string env_or_error(const char* var) {
  const char* v = std::getenv(var);
  EMBER_CHECK(v && *v, "Error initializing torch.distributed using env:// rendezvous: environment variable ",
              var, " expected, but not set");
  return v;
}

int to_int(const std::string& s, const char* what) {
  try {
    size_t used = 0;
    int v = std::stoi(s, &used);
    if (used == s.size()) return v;
  } catch (const std::exception&) {
  }
  ::ember::detail::throw_error(::ember::detail::str_cat("Error initializing torch.distributed: ", what,
                                                        " is not an integer: '", s, "'"));
}

// "a=1&b=2" -> the value of `key`, or "" when absent.
std::string query_value(const std::string& query, const std::string& key) {
  size_t pos = 0;
  while (pos <= query.size()) {
    size_t end = query.find('&', pos);
    if (end == std::string::npos) end = query.size();
    std::string item = query.substr(pos, end - pos);
    if (item.rfind(key + "=", 0) == 0) return item.substr(key.size() + 1);
    pos = end + 1;
  }
  return "";
}

// The store, rank and world size an init_method names (torch.distributed.rendezvous).
std::shared_ptr<Store> rendezvous(const std::string& url, int& rank, int& world_size,
                                  std::chrono::milliseconds timeout) {
  std::string scheme = url.substr(0, url.find("://"));
  std::string rest = url.find("://") == std::string::npos ? "" : url.substr(url.find("://") + 3);
  std::string query = rest.find('?') == std::string::npos ? "" : rest.substr(rest.find('?') + 1);
  rest = rest.substr(0, rest.find('?'));
  auto from_query = [&](const char* scheme_name, const char* key, const char* missing, int& out) {
    if (out >= 0) return;
    std::string v = query_value(query, key);
    EMBER_CHECK(!v.empty(), "Error initializing torch.distributed using ", scheme_name,
                " rendezvous: ", missing);
    out = to_int(v, key);
  };
  if (scheme == "env") {
    if (rank < 0) rank = to_int(env_or_error("RANK"), "RANK");
    if (world_size < 0) world_size = to_int(env_or_error("WORLD_SIZE"), "WORLD_SIZE");
    std::string addr = env_or_error("MASTER_ADDR");
    int port = to_int(env_or_error("MASTER_PORT"), "MASTER_PORT");
    return std::make_shared<TCPStore>(addr, port, world_size, rank == 0, timeout);
  }
  if (scheme == "tcp") {
    size_t colon = rest.rfind(':');
    EMBER_CHECK(colon != std::string::npos,
                "Error initializing torch.distributed using tcp:// rendezvous: port number missing");
    from_query("tcp://", "rank", "rank parameter missing", rank);
    from_query("tcp://", "world_size", "world size parameter missing", world_size);
    return std::make_shared<TCPStore>(rest.substr(0, colon), to_int(rest.substr(colon + 1), "port"),
                                      world_size, rank == 0, timeout);
  }
  if (scheme == "file") {
    EMBER_CHECK(!rest.empty(), "Error initializing torch.distributed using file:// rendezvous: path missing");
    from_query("file://", "rank", "rank parameter missing", rank);
    from_query("file://", "world_size", "world size parameter missing", world_size);
    auto store = std::make_shared<FileStore>(rest, world_size);
    store->set_timeout(timeout);
    return store;
  }
  ::ember::detail::throw_error(::ember::detail::str_cat("No rendezvous handler for ", scheme, "://"));
}

void check_backend(const std::string& backend) {
  EMBER_CHECK(backend != "nccl" || ProcessGroupNCCL::is_available(),
              "Distributed package doesn't have NCCL built in");
  EMBER_CHECK(backend == "gloo" || backend == "nccl", "Invalid backend: '", backend,
              "' (ember has: gloo, nccl)");
}

ProcessGroupPtr make_group(const std::string& backend, std::shared_ptr<Store> store, int rank, int size,
                           std::chrono::milliseconds timeout) {
  check_backend(backend);
  if (backend == "nccl") {
    ProcessGroupNCCL::Options options;
    options.timeout = timeout;
    return ProcessGroupPtr(new ProcessGroupNCCL(store, rank, size, options));
  }
  ProcessGroupGloo::Options options;
  options.timeout = timeout;
  return ProcessGroupPtr(new ProcessGroupGloo(store, rank, size, options));
}

// The group to run on and the rank translation for it; null for a non-member.
ProcessGroupPtr resolve(const ProcessGroupPtr& group) {
  if (group) return group;
  auto& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  EMBER_CHECK(r.world, kNotInitialized);
  return r.world;
}

// A global rank -> its rank in `group` (torch.distributed.get_group_rank).
int group_rank(const ProcessGroupPtr& group, int global_rank) {
  auto& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.groups.find(group.get());
  if (it == r.groups.end()) return global_rank;  // a group made directly: its ranks are the ranks
  const auto& ranks = it->second.global_ranks;
  auto pos = std::find(ranks.begin(), ranks.end(), global_rank);
  EMBER_CHECK(pos != ranks.end(), "Global rank ", global_rank, " is not part of group ", group.get());
  return static_cast<int>(pos - ranks.begin());
}

intrusive_ptr<Work> finish(intrusive_ptr<Work> work, bool async_op) {
  if (async_op) return work;
  work->wait();
  return {};
}

}  // namespace

void init_process_group(const std::string& backend, const std::string& init_method,
                        std::chrono::milliseconds timeout, int world_size, int rank,
                        std::shared_ptr<Store> store) {
  check_backend(backend);
  auto& r = registry();
  {
    std::lock_guard<std::mutex> lock(r.mutex);
    EMBER_CHECK(!r.world, "trying to initialize the default process group twice!");
  }
  if (store) {
    EMBER_CHECK(init_method.empty(), "Cannot specify both init_method and store.");
    EMBER_CHECK(world_size > 0, "world_size must be positive if using store");
    EMBER_CHECK(rank >= 0, "rank must be non-negative if using store");
  } else {
    store = rendezvous(init_method.empty() ? "env://" : init_method, rank, world_size, timeout);
  }
  // Groups rendezvous under their own prefix, as c10d's, so later groups reuse the store.
  auto pg =
      make_group(backend, std::make_shared<PrefixStore>("default_pg/", store), rank, world_size, timeout);
  std::lock_guard<std::mutex> lock(r.mutex);
  r.world = pg;
  r.store = store;
  r.backend = backend;
  r.global_rank = rank;
  r.world_size = world_size;
  r.groups_made = 0;
  std::vector<int> all(static_cast<size_t>(world_size));
  for (int i = 0; i < world_size; ++i) all[static_cast<size_t>(i)] = i;
  r.groups[pg.get()] = GroupInfo{all, backend};
}

void destroy_process_group(const ProcessGroupPtr& group) {
  auto& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (group && group != r.world) {
    r.groups.erase(group.get());
    return;
  }
  EMBER_CHECK(r.world, kNotInitialized);
  r.groups.clear();
  r.world = {};
  r.store = nullptr;
  r.global_rank = r.world_size = -1;
}

bool is_initialized() {
  auto& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  return static_cast<bool>(r.world);
}

bool is_gloo_available() { return ProcessGroupGloo::is_available(); }

int get_rank(const ProcessGroupPtr& group) {
  if (group) return group->rank();
  return resolve(group)->rank();
}

int get_world_size(const ProcessGroupPtr& group) {
  if (group) return group->size();
  return resolve(group)->size();
}

ProcessGroupPtr get_default_group() { return resolve({}); }

std::string get_backend(const ProcessGroupPtr& group) { return resolve(group)->getBackendName(); }

ProcessGroupPtr new_group(std::vector<int> ranks, std::chrono::milliseconds timeout,
                          const std::string& backend) {
  auto& r = registry();
  std::shared_ptr<Store> store;
  int me = -1, world_size = -1, id = 0;
  std::string be;
  {
    std::lock_guard<std::mutex> lock(r.mutex);
    EMBER_CHECK(r.world, kNotInitialized);
    store = r.store;
    me = r.global_rank;
    world_size = r.world_size;
    id = ++r.groups_made;
    be = backend.empty() ? r.backend : backend;
  }
  if (ranks.empty()) {
    for (int i = 0; i < world_size; ++i) ranks.push_back(i);
  }
  std::sort(ranks.begin(), ranks.end());
  for (size_t i = 0; i < ranks.size(); ++i) {
    EMBER_CHECK(ranks[i] >= 0 && ranks[i] < world_size,
                "The new group's rank should be within the world_size set by "
                "init_process_group");
    EMBER_CHECK(i == 0 || ranks[i] != ranks[i - 1], "new_group: rank ", ranks[i], " is listed twice");
  }
  auto pos = std::find(ranks.begin(), ranks.end(), me);
  if (pos == ranks.end()) return {};  // NON_GROUP_MEMBER
  int my_group_rank = static_cast<int>(pos - ranks.begin());
  auto prefixed = std::make_shared<PrefixStore>("group_" + std::to_string(id) + "/", store);
  auto pg = make_group(be, prefixed, my_group_rank, static_cast<int>(ranks.size()), timeout);
  std::lock_guard<std::mutex> lock(r.mutex);
  r.groups[pg.get()] = GroupInfo{ranks, be};
  return pg;
}

intrusive_ptr<Work> all_reduce(Tensor& tensor, ReduceOp op, bool async_op, const ProcessGroupPtr& group) {
  auto pg = resolve(group);
  std::vector<Tensor> tensors{tensor};
  AllreduceOptions opts;
  opts.reduceOp = op;
  return finish(pg->allreduce(tensors, opts), async_op);
}

intrusive_ptr<Work> broadcast(Tensor& tensor, int src, bool async_op, const ProcessGroupPtr& group) {
  auto pg = resolve(group);
  std::vector<Tensor> tensors{tensor};
  BroadcastOptions opts;
  opts.rootRank = group_rank(pg, src);
  return finish(pg->broadcast(tensors, opts), async_op);
}

intrusive_ptr<Work> reduce(Tensor& tensor, int dst, ReduceOp op, bool async_op,
                           const ProcessGroupPtr& group) {
  auto pg = resolve(group);
  std::vector<Tensor> tensors{tensor};
  ReduceOptions opts;
  opts.reduceOp = op;
  opts.rootRank = group_rank(pg, dst);
  return finish(pg->reduce(tensors, opts), async_op);
}

intrusive_ptr<Work> all_gather(std::vector<Tensor>& tensor_list, const Tensor& tensor, bool async_op,
                               const ProcessGroupPtr& group) {
  auto pg = resolve(group);
  std::vector<std::vector<Tensor>> outputs{tensor_list};
  std::vector<Tensor> inputs{tensor};
  return finish(pg->allgather(outputs, inputs), async_op);
}

intrusive_ptr<Work> reduce_scatter(Tensor& output, const std::vector<Tensor>& input_list, ReduceOp op,
                                   bool async_op, const ProcessGroupPtr& group) {
  auto pg = resolve(group);
  std::vector<Tensor> outputs{output};
  std::vector<std::vector<Tensor>> inputs{input_list};
  ReduceScatterOptions opts;
  opts.reduceOp = op;
  return finish(pg->reduce_scatter(outputs, inputs, opts), async_op);
}

intrusive_ptr<Work> barrier(bool async_op, const ProcessGroupPtr& group) {
  return finish(resolve(group)->barrier(), async_op);
}

intrusive_ptr<Work> isend(const Tensor& tensor, int dst, const ProcessGroupPtr& group, int tag) {
  auto pg = resolve(group);
  std::vector<Tensor> tensors{tensor};
  return pg->send(tensors, group_rank(pg, dst), tag);
}

intrusive_ptr<Work> irecv(Tensor& tensor, int src, const ProcessGroupPtr& group, int tag) {
  auto pg = resolve(group);
  std::vector<Tensor> tensors{tensor};
  return pg->recv(tensors, group_rank(pg, src), tag);
}

void send(const Tensor& tensor, int dst, const ProcessGroupPtr& group, int tag) {
  isend(tensor, dst, group, tag)->wait();
}

int recv(Tensor& tensor, int src, const ProcessGroupPtr& group, int tag) {
  irecv(tensor, src, group, tag)->wait();
  return src;
}

}  // namespace ember::dist
