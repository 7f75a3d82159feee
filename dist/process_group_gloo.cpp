// ProcessGroupGloo on gloo's TCP transport (dist/process_group_gloo.h).
//
// Threading, as c10d's: each collective is checked on the calling thread (bad input raises
// there, before anything is sent), given the next tag under the queue lock (so every rank
// tags its collectives in issue order and gloo matches them by tag), and queued; the group's
// worker threads run queued collectives in that order. Send and recv are posted on the
// calling thread at once (gloo's unbound buffers), and their Work waits for the transfer.
//
// Tensors: non-contiguous tensors run on a contiguous copy that is copied back afterwards.
// Float16/BFloat16 reduce element by element through float, rounding each partial result
// back, as c10d's gloo reductions on c10::Half/c10::BFloat16 do. AVG is SUM then a division
// by the group size (so an integer tensor raises the division's dtype error, as in PyTorch).
#include "ember/dist/process_group_gloo.h"

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <mutex>
#include <sstream>
#include <thread>
#include <utility>

#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/reduce.h>
#include <gloo/rendezvous/context.h>
#include <gloo/transport/tcp/device.h>

#include "ember/autograd/grad_mode.h"
#include "ember/core/ops/creation.h"
#include "ember/dist/gloo_store_adapter.h"

namespace ember::dist {

namespace {

using Clock = std::chrono::steady_clock;
using ReduceFunc = std::function<void(void*, const void*, const void*, size_t)>;

// ---- reductions ---------------------------------------------------------------------

// out[i] = f(a[i], b[i]); Half and BFloat16 compute in float and round back.
template <class T, class F>
void reduce_elements(void* out, const void* a, const void* b, size_t n) {
  auto* o = static_cast<T*>(out);
  const auto* x = static_cast<const T*>(a);
  const auto* y = static_cast<const T*>(b);
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    for (size_t i = 0; i < n; ++i) o[i] = T(F{}(static_cast<float>(x[i]), static_cast<float>(y[i])));
  } else {
    for (size_t i = 0; i < n; ++i) o[i] = static_cast<T>(F{}(x[i], y[i]));
  }
}

struct SumFn {
  template <class U>
  auto operator()(U a, U b) const {
    return a + b;
  }
};
struct ProdFn {
  template <class U>
  auto operator()(U a, U b) const {
    return a * b;
  }
};
struct MinFn {
  template <class U>
  U operator()(U a, U b) const {
    return std::min(a, b);
  }
};
struct MaxFn {
  template <class U>
  U operator()(U a, U b) const {
    return std::max(a, b);
  }
};
struct AndFn {
  template <class U>
  auto operator()(U a, U b) const {
    return a & b;
  }
};
struct OrFn {
  template <class U>
  auto operator()(U a, U b) const {
    return a | b;
  }
};
struct XorFn {
  template <class U>
  auto operator()(U a, U b) const {
    return a ^ b;
  }
};

// Bool: a sum is "any", a product "all" (what c10d's gloo sum/product give after the
// conversion back to bool).
template <class T>
ReduceFunc reduce_func(ReduceOp op) {
  if constexpr (std::is_same_v<T, bool>) {
    switch (op.op_) {
      case ReduceOp::SUM:
      case ReduceOp::AVG:
      case ReduceOp::MAX:
      case ReduceOp::BOR:
        return &reduce_elements<T, OrFn>;
      case ReduceOp::PRODUCT:
      case ReduceOp::MIN:
      case ReduceOp::BAND:
        return &reduce_elements<T, AndFn>;
      case ReduceOp::BXOR:
        return &reduce_elements<T, XorFn>;
    }
  } else {
    switch (op.op_) {
      case ReduceOp::SUM:
      case ReduceOp::AVG:
        return &reduce_elements<T, SumFn>;
      case ReduceOp::PRODUCT:
        return &reduce_elements<T, ProdFn>;
      case ReduceOp::MIN:
        return &reduce_elements<T, MinFn>;
      case ReduceOp::MAX:
        return &reduce_elements<T, MaxFn>;
      case ReduceOp::BAND:
      case ReduceOp::BOR:
      case ReduceOp::BXOR:
        if constexpr (std::is_integral_v<T>) {
          if (op.op_ == ReduceOp::BAND) return &reduce_elements<T, AndFn>;
          if (op.op_ == ReduceOp::BOR) return &reduce_elements<T, OrFn>;
          return &reduce_elements<T, XorFn>;
        }
        break;
    }
  }
  ::ember::detail::throw_error(
      ::ember::detail::str_cat("Cannot use ReduceOp.", reduce_op_name(op), " with non-integral dtype"));
}

// ---- input checks, in c10d's words ---------------------------------------------------

std::string sizes_str(IntArrayRef sizes) {
  std::ostringstream s;
  s << "(";
  for (size_t i = 0; i < sizes.size(); ++i) s << (i ? ", " : "") << sizes[i];
  s << ")";
  return s.str();
}

bool is_supported_dtype(ScalarType t) {
  return t == kFloat || t == kDouble || t == kHalf || t == kBFloat16 || t == kInt || t == kLong ||
         t == kByte || t == kChar || t == kBool;
}

void check_tensor(const std::string& fn, const Tensor& t) {
  EMBER_CHECK(t.defined(), fn, ": tensor is undefined");
  EMBER_CHECK(t.is_cpu(), fn, ": ember's gloo backend takes CPU tensors, got a tensor on ", t.device(),
              " (use the nccl backend for CUDA tensors)");
  EMBER_CHECK(is_supported_dtype(t.dtype()), "Invalid scalar type");
}

// Every tensor has the dtype and sizes of `like` (c10d's assertTypeAndSizesMatch).
void check_same(const std::string& fn, const std::vector<Tensor>& tensors, const Tensor& like) {
  for (size_t i = 0; i < tensors.size(); ++i) {
    check_tensor(fn, tensors[i]);
    EMBER_CHECK(tensors[i].dtype() == like.dtype(), fn, ": invalid tensor type at index ", i, " (expected ",
                scalar_type_name(like.dtype()), ", got ", scalar_type_name(tensors[i].dtype()), ")");
    EMBER_CHECK(tensors[i].sizes() == like.sizes(), fn, ": invalid tensor size at index ", i, " (expected ",
                sizes_str(like.sizes()), ", got ", sizes_str(tensors[i].sizes()), ")");
  }
}

void check_non_empty(const std::string& fn, size_t n) {
  EMBER_CHECK(n > 0, fn, ": requires non-empty tensor list");
}

void check_single(const std::string& fn, size_t n) {
  EMBER_CHECK(n == 1, fn, ": requires a single-element tensor list");
}

void check_root(const std::string& fn, int64_t root, int size) {
  EMBER_CHECK(root >= 0 && root < size, fn, ": invalid root rank: ", root);
}

void check_reduce_op(ReduceOp op, ScalarType t) {
  if (op.op_ == ReduceOp::BAND || op.op_ == ReduceOp::BOR || op.op_ == ReduceOp::BXOR)
    EMBER_CHECK(is_integral(t, true), "Cannot use ReduceOp.", reduce_op_name(op), " with non-integral dtype");
}

// A contiguous tensor to hand gloo: the tensor itself, or a copy that copy_back() returns.
struct Buffer {
  Tensor user;
  Tensor data;
  explicit Buffer(const Tensor& t) : user(t), data(t.is_contiguous() ? t : t.contiguous()) {}
  void copy_back() {
    if (!data.is_same(user)) user.copy_(data);
  }
};

std::vector<Buffer> buffers(const std::vector<Tensor>& tensors) {
  return std::vector<Buffer>(tensors.begin(), tensors.end());
}

// ---- the transport device --------------------------------------------------------------

// Whether `host` resolves to an address this machine can bind (c10d's check before it
// uses the hostname for the default device).
bool resolves_to_bindable_address(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* result = nullptr;
  if (getaddrinfo(host.c_str(), nullptr, &hints, &result) != 0) return false;
  bool ok = false;
  for (addrinfo* a = result; a && !ok; a = a->ai_next) {
    int fd = socket(a->ai_family, a->ai_socktype, a->ai_protocol);
    if (fd < 0) continue;
    ok = bind(fd, a->ai_addr, a->ai_addrlen) == 0;
    close(fd);
  }
  freeaddrinfo(result);
  return ok;
}

std::shared_ptr<::gloo::transport::Device> make_device(const ProcessGroupGloo::Options& o) {
  ::gloo::transport::tcp::attr attr;
  const char* ifname = std::getenv("GLOO_SOCKET_IFNAME");
  if (!o.interface.empty()) {
    attr.iface = o.interface;
  } else if (!o.hostname.empty()) {
    attr.hostname = o.hostname;
  } else if (ifname && *ifname) {
    attr.iface = ifname;
  } else {
    char host[256] = {};
    gethostname(host, sizeof(host) - 1);
    attr.hostname = resolves_to_bindable_address(host) ? std::string(host) : std::string("127.0.0.1");
  }
  return ::gloo::transport::tcp::CreateDevice(attr);
}

std::exception_ptr as_ember_error(std::exception_ptr e) {
  try {
    std::rethrow_exception(e);
  } catch (const Error&) {
    return e;
  } catch (const std::exception& x) {
    return std::make_exception_ptr(Error(x.what()));
  } catch (...) {
    return std::make_exception_ptr(Error("unknown error in a gloo collective"));
  }
}

// Send and recv: gloo starts the transfer when it is posted; wait() waits for its end.
class P2PWork final : public Work {
 public:
  P2PWork(std::unique_ptr<::gloo::transport::UnboundBuffer> buf, bool is_send, int peer, Buffer tensor,
          std::chrono::milliseconds default_timeout)
      : Work(peer, {tensor.user}),
        buf_(std::move(buf)),
        is_send_(is_send),
        tensor_(std::move(tensor)),
        default_timeout_(default_timeout) {}

  bool wait(std::chrono::milliseconds timeout) override {
    std::lock_guard<std::mutex> once(wait_mutex_);
    if (!is_completed()) {
      try {
        auto t = timeout == kNoTimeout ? default_timeout_ : timeout;
        if (is_send_) {
          buf_->waitSend(t);
        } else {
          int src = -1;
          buf_->waitRecv(&src, t);
          tensor_.copy_back();
        }
        finish();
      } catch (...) {
        finish(as_ember_error(std::current_exception()));
      }
    }
    return Work::wait(kNoTimeout);
  }

 private:
  std::mutex wait_mutex_;
  std::unique_ptr<::gloo::transport::UnboundBuffer> buf_;
  bool is_send_;
  Buffer tensor_;
  std::chrono::milliseconds default_timeout_;
};

}  // namespace

// ---- the group -------------------------------------------------------------------------

struct ProcessGroupGloo::Impl {
  std::shared_ptr<::gloo::Context> context;
  std::chrono::milliseconds timeout;

  std::mutex mutex;
  std::condition_variable cv;
  std::deque<std::function<void()>> queue;
  std::vector<intrusive_ptr<Work>> in_flight;  // for barrier, which waits for what came before
  uint32_t next_tag = 0;
  bool stop = false;
  std::vector<std::thread> workers;

  std::chrono::milliseconds timeout_for(std::chrono::milliseconds t) const {
    return t == kUnsetTimeout ? timeout : t;
  }

  // Queues `run(tag)`; the returned Work finishes when it has run. `outputs` are Work::result.
  intrusive_ptr<Work> enqueue(std::vector<Tensor> outputs,
                              std::function<void(uint32_t, const std::vector<intrusive_ptr<Work>>&)> run) {
    auto work = intrusive_ptr<Work>::make(-1, std::move(outputs));
    {
      std::lock_guard<std::mutex> lock(mutex);
      uint32_t tag = next_tag++;
      std::erase_if(in_flight, [](const intrusive_ptr<Work>& w) { return w->is_completed(); });
      queue.emplace_back([work, tag, prior = in_flight, run = std::move(run)] {
        try {
          NoGradGuard no_grad;  // the copies back into user tensors are not autograd ops
          run(tag, prior);
          work->finish();
        } catch (...) {
          work->finish(as_ember_error(std::current_exception()));
        }
      });
      in_flight.push_back(work);
    }
    cv.notify_one();
    return work;
  }

  void worker_loop() {
    for (;;) {
      std::function<void()> job;
      {
        std::unique_lock<std::mutex> lock(mutex);
        cv.wait(lock, [this] { return stop || !queue.empty(); });
        if (queue.empty()) return;  // stopping, and everything queued has run
        job = std::move(queue.front());
        queue.pop_front();
      }
      job();
    }
  }
};

bool ProcessGroupGloo::is_available() { return true; }

ProcessGroupGloo::ProcessGroupGloo(const std::shared_ptr<Store>& store, int rank, int size, Options options)
    : ProcessGroup(rank, size), store_(store), options_(std::move(options)), impl_(std::make_unique<Impl>()) {
  EMBER_CHECK(store_ != nullptr, "ProcessGroupGloo: store is null");
  EMBER_CHECK(options_.threads >= 1, "ProcessGroupGloo: threads must be at least 1, got ", options_.threads);
  EMBER_CHECK(options_.timeout.count() > 0, "ProcessGroupGloo: timeout must be positive");
  impl_->timeout = options_.timeout;
  auto device = make_device(options_);
  auto context = std::make_shared<::gloo::rendezvous::Context>(rank, size);
  context->setTimeout(options_.timeout);
  GlooStoreAdapter adapter(store_);
  try {
    context->connectFullMesh(adapter, device);
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    ::ember::detail::throw_error(::ember::detail::str_cat("ProcessGroupGloo: rendezvous of rank ", rank,
                                                          " of ", size, " failed: ", e.what()));
  }
  impl_->context = std::move(context);
  for (int i = 0; i < options_.threads; ++i) impl_->workers.emplace_back([this] { impl_->worker_loop(); });
}

ProcessGroupGloo::~ProcessGroupGloo() {
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    impl_->stop = true;
  }
  impl_->cv.notify_all();
  for (auto& w : impl_->workers) w.join();
}

intrusive_ptr<Work> ProcessGroupGloo::allreduce(std::vector<Tensor>& tensors, const AllreduceOptions& opts) {
  const std::string fn = "ProcessGroupGloo::allreduce";
  check_non_empty(fn, tensors.size());
  check_same(fn, tensors, tensors[0]);
  check_reduce_op(opts.reduceOp, tensors[0].dtype());
  auto timeout = impl_->timeout_for(opts.timeout);
  auto context = impl_->context;
  int group_size = size();
  return impl_->enqueue(tensors, [bufs = buffers(tensors), op = opts.reduceOp, timeout, context, group_size](
                                     uint32_t tag, const auto&) mutable {
    if (bufs[0].data.numel() == 0) return;  // every rank has the same sizes: all skip
    visit_dtype(bufs[0].data.dtype(), [&]<class T>() {
      ::gloo::AllreduceOptions o(context);
      std::vector<T*> ptrs;
      for (auto& b : bufs) ptrs.push_back(static_cast<T*>(b.data.data_ptr()));
      o.setOutputs(ptrs, static_cast<size_t>(bufs[0].data.numel()));
      o.setReduceFunction(reduce_func<T>(op));
      o.setTag(tag);
      o.setTimeout(timeout);
      ::gloo::allreduce(o);
    });
    for (auto& b : bufs) {
      if (op.op_ == ReduceOp::AVG) b.data.div_(group_size);
      b.copy_back();
    }
  });
}

intrusive_ptr<Work> ProcessGroupGloo::broadcast(std::vector<Tensor>& tensors, const BroadcastOptions& opts) {
  const std::string fn = "ProcessGroupGloo::broadcast";
  check_non_empty(fn, tensors.size());
  check_root(fn, opts.rootRank, size());
  EMBER_CHECK(opts.rootTensor >= 0 && opts.rootTensor < static_cast<int64_t>(tensors.size()), fn,
              ": invalid root tensor: ", opts.rootTensor);
  check_same(fn, tensors, tensors[0]);
  auto timeout = impl_->timeout_for(opts.timeout);
  auto context = impl_->context;
  return impl_->enqueue(
      tensors, [bufs = buffers(tensors), opts, timeout, context](uint32_t tag, const auto&) mutable {
        Buffer& root = bufs[static_cast<size_t>(opts.rootTensor)];
        if (root.data.numel() == 0) return;
        visit_dtype(root.data.dtype(), [&]<class T>() {
          ::gloo::BroadcastOptions o(context);
          o.setRoot(static_cast<int>(opts.rootRank));
          o.setOutput(static_cast<T*>(root.data.data_ptr()), static_cast<size_t>(root.data.numel()));
          o.setTag(tag);
          o.setTimeout(timeout);
          ::gloo::broadcast(o);
        });
        for (auto& b : bufs) {
          if (&b != &root) b.data.copy_(root.data);
          b.copy_back();
        }
      });
}

intrusive_ptr<Work> ProcessGroupGloo::reduce(std::vector<Tensor>& tensors, const ReduceOptions& opts) {
  const std::string fn = "ProcessGroupGloo::reduce";
  check_root(fn, opts.rootRank, size());
  check_single(fn, tensors.size());
  check_same(fn, tensors, tensors[0]);
  check_reduce_op(opts.reduceOp, tensors[0].dtype());
  auto timeout = impl_->timeout_for(opts.timeout);
  auto context = impl_->context;
  bool is_root = opts.rootRank == rank();
  int group_size = size();
  // Only the root's tensor receives the result; other ranks reduce from a scratch copy so
  // their tensor keeps its value (gloo uses its buffer for partial results).
  Buffer buf(tensors[0]);
  if (!is_root) buf.data = tensors[0].clone();
  return impl_->enqueue(
      tensors, [buf, opts, timeout, context, is_root, group_size](uint32_t tag, const auto&) mutable {
        if (buf.data.numel() == 0) return;
        visit_dtype(buf.data.dtype(), [&]<class T>() {
          ::gloo::ReduceOptions o(context);
          o.setRoot(static_cast<int>(opts.rootRank));
          o.setOutput(static_cast<T*>(buf.data.data_ptr()), static_cast<size_t>(buf.data.numel()));
          o.setReduceFunction(reduce_func<T>(opts.reduceOp));
          o.setTag(tag);
          o.setTimeout(timeout);
          ::gloo::reduce(o);
        });
        if (!is_root) return;
        if (opts.reduceOp.op_ == ReduceOp::AVG) buf.data.div_(group_size);
        buf.copy_back();
      });
}

intrusive_ptr<Work> ProcessGroupGloo::allgather(std::vector<std::vector<Tensor>>& outputTensors,
                                                std::vector<Tensor>& inputTensors,
                                                const AllgatherOptions& opts) {
  const std::string fn = "ProcessGroupGloo::allgather";
  check_single(fn, inputTensors.size());
  EMBER_CHECK(outputTensors.size() == 1, fn,
              ": requires a single-element output list containing a list with ", size(), " tensors");
  EMBER_CHECK(outputTensors[0].size() == static_cast<size_t>(size()), fn,
              ": invalid output tensor list at index 0 (expected length ", size(), ", got ",
              outputTensors[0].size(), ")");
  check_same(fn, inputTensors, inputTensors[0]);
  check_same(fn, outputTensors[0], inputTensors[0]);
  auto timeout = impl_->timeout_for(opts.timeout);
  auto context = impl_->context;
  int group_size = size();
  Tensor input = inputTensors[0].contiguous();
  std::vector<int64_t> flat_sizes{group_size * input.numel()};
  Tensor flat = empty(flat_sizes, input.options());
  return impl_->enqueue(outputTensors[0], [input, flat, outs = buffers(outputTensors[0]), timeout, context](
                                              uint32_t tag, const auto&) mutable {
    if (input.numel() == 0) return;
    visit_dtype(input.dtype(), [&]<class T>() {
      ::gloo::AllgatherOptions o(context);
      o.setInput(static_cast<T*>(input.data_ptr()), static_cast<size_t>(input.numel()));
      o.setOutput(static_cast<T*>(flat.data_ptr()), static_cast<size_t>(flat.numel()));
      o.setTag(tag);
      o.setTimeout(timeout);
      ::gloo::allgather(o);
    });
    const size_t bytes = input.nbytes();
    for (size_t r = 0; r < outs.size(); ++r) {
      std::memcpy(outs[r].data.data_ptr(), static_cast<const char*>(flat.data_ptr()) + r * bytes, bytes);
      outs[r].copy_back();
    }
  });
}

// c10d's gloo backend reduces the whole input list with one allreduce and keeps this rank's
// part; the same here (a ring reduce-scatter would move 1/size of the bytes).
intrusive_ptr<Work> ProcessGroupGloo::reduce_scatter(std::vector<Tensor>& outputTensors,
                                                     std::vector<std::vector<Tensor>>& inputTensors,
                                                     const ReduceScatterOptions& opts) {
  const std::string fn = "ProcessGroupGloo::reduce_scatter";
  check_single(fn, outputTensors.size());
  EMBER_CHECK(inputTensors.size() == 1, fn, ": requires a single-element input list containing a list with ",
              size(), " tensors");
  EMBER_CHECK(inputTensors[0].size() == static_cast<size_t>(size()),
              "invalid input tensor list size, must be world size");
  check_same(fn, outputTensors, outputTensors[0]);
  check_same(fn, inputTensors[0], outputTensors[0]);
  check_reduce_op(opts.reduceOp, outputTensors[0].dtype());
  auto timeout = impl_->timeout_for(opts.timeout);
  auto context = impl_->context;
  int group_size = size();
  int my_rank = rank();
  // The inputs are packed now, on the calling thread: the data at issue time is what counts.
  const Tensor& out0 = outputTensors[0];
  std::vector<int64_t> flat_sizes{group_size * out0.numel()};
  Tensor flat = empty(flat_sizes, out0.options());
  const size_t bytes = out0.nbytes();
  for (int r = 0; r < group_size; ++r) {
    Tensor in = inputTensors[0][static_cast<size_t>(r)].contiguous();
    std::memcpy(static_cast<char*>(flat.data_ptr()) + r * bytes, in.data_ptr(), bytes);
  }
  return impl_->enqueue(outputTensors, [flat, out = Buffer(out0), opts, timeout, context, group_size, my_rank,
                                        bytes](uint32_t tag, const auto&) mutable {
    if (bytes == 0) return;
    visit_dtype(flat.dtype(), [&]<class T>() {
      ::gloo::AllreduceOptions o(context);
      o.setOutput(static_cast<T*>(flat.data_ptr()), static_cast<size_t>(flat.numel()));
      o.setReduceFunction(reduce_func<T>(opts.reduceOp));
      o.setTag(tag);
      o.setTimeout(timeout);
      ::gloo::allreduce(o);
    });
    std::memcpy(out.data.data_ptr(), static_cast<const char*>(flat.data_ptr()) + my_rank * bytes, bytes);
    if (opts.reduceOp.op_ == ReduceOp::AVG) out.data.div_(group_size);
    out.copy_back();
  });
}

// As c10d's: the barrier first waits for every collective issued before it on this rank.
intrusive_ptr<Work> ProcessGroupGloo::barrier(const BarrierOptions& opts) {
  auto timeout = impl_->timeout_for(opts.timeout);
  auto context = impl_->context;
  return impl_->enqueue({}, [timeout, context](uint32_t tag, const std::vector<intrusive_ptr<Work>>& prior) {
    for (const auto& w : prior) w->wait();
    ::gloo::BarrierOptions o(context);
    o.setTag(tag);
    o.setTimeout(timeout);
    ::gloo::barrier(o);
  });
}

namespace {
void check_p2p(const std::string& fn, std::vector<Tensor>& tensors, int peer, int tag, int size, int rank,
               const char* what) {
  EMBER_CHECK(tensors.size() == 1, fn, " takes a single tensor");
  check_tensor(fn, tensors[0]);
  EMBER_CHECK(peer >= 0 && peer < size, "Invalid ", what, " rank: ", peer);
  EMBER_CHECK(peer != rank, "Invalid ", what, " rank: ", what,
              " rank should not be the same as the rank of the current process.");
  EMBER_CHECK(tag >= 0, "Tag must be nonnegative");
}
}  // namespace

intrusive_ptr<Work> ProcessGroupGloo::send(std::vector<Tensor>& tensors, int dstRank, int tag) {
  check_p2p("ProcessGroupGloo::send", tensors, dstRank, tag, size(), rank(), "destination");
  Buffer buf(tensors[0]);
  auto ub = impl_->context->createUnboundBuffer(buf.data.data_ptr(), buf.data.nbytes());
  ub->send(dstRank, static_cast<uint64_t>(tag));
  return intrusive_ptr<Work>(new P2PWork(std::move(ub), true, dstRank, std::move(buf), impl_->timeout));
}

intrusive_ptr<Work> ProcessGroupGloo::recv(std::vector<Tensor>& tensors, int srcRank, int tag) {
  check_p2p("ProcessGroupGloo::recv", tensors, srcRank, tag, size(), rank(), "source");
  Buffer buf(tensors[0]);
  auto ub = impl_->context->createUnboundBuffer(buf.data.data_ptr(), buf.data.nbytes());
  ub->recv(srcRank, static_cast<uint64_t>(tag));
  return intrusive_ptr<Work>(new P2PWork(std::move(ub), false, srcRank, std::move(buf), impl_->timeout));
}

}  // namespace ember::dist
