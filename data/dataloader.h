// DataLoader: iterates a dataset in batches chosen by a sampler, optionally loading them on
// worker threads ahead of the consumer (libtorch's make_data_loader / StatelessDataLoader,
// with PyTorch's shuffle, seed, drop_last and pin_memory options). StatefulDataLoader
// iterates a stateful dataset (ChunkDataset, a user's StatefulDataset): it asks for
// batch_size examples until the dataset answers nullopt, and its workers share the one dataset.
//
//   auto loader = make_data_loader(std::move(dataset), DataLoaderOptions().batch_size(64).workers(2));
//   for (auto& batch : *loader) { ... }   // each begin() is a new epoch
//
// Note [Batch order with workers]
// The calling thread asks the sampler for index batches and numbers them; workers (each with
// its own copy of the dataset, as libtorch) load them in any order, and the results are
// handed out by number. With seeded randomness (data/random.h) a given seed therefore gives
// the same batch sequence for any worker count. At most max_jobs batches are in flight.
#pragma once

#include <condition_variable>
#include <deque>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "ember/core/tensor.h"
#include "ember/data/dataloader_options.h"
#include "ember/data/random.h"
#include "ember/data/samplers/random.h"
#include "ember/data/samplers/sequential.h"
#include "ember/data/samplers/stream.h"

namespace ember::data {

namespace detail {
/// "Caught Error in DataLoader worker process 1 while loading sample 17: <what>"
/// (worker < 0 means the calling thread: "main process").
std::string loader_error(int worker, const std::exception& e, const std::optional<size_t>& sample,
                         const std::vector<size_t>& indices);
/// Whether batches are to be pinned: pin_memory was asked for and a CUDA device is present.
/// Asked for without a device, it prints PyTorch's warning once per process.
bool check_pin_memory(bool pin_memory);
/// Moves a batch's tensors to pinned memory: a Tensor, an Example's data and target, each
/// element of a vector of those; anything else stays as it is.
template <class T>
void pin_batch(T& batch) {
  if constexpr (std::is_same_v<T, Tensor>) {
    if (batch.defined()) batch = batch.pin_memory();
  } else if constexpr (requires { batch.data; }) {
    pin_batch(batch.data);
    if constexpr (requires { batch.target; }) pin_batch(batch.target);
  } else if constexpr (requires { batch.begin(); batch.end(); }) {
    for (auto& x : batch) pin_batch(x);
  }
}
/// Forgets that the pin_memory warning was printed (for tests).
void reset_pin_memory_warning();
/// Throws "DataLoader timed out after ... seconds".
[[noreturn]] void throw_timeout(std::chrono::milliseconds timeout);
/// The number of examples a batch request asks for (indices, a BatchSize, a count).
template <class Request>
size_t request_size(const Request& request) {
  if constexpr (requires { request.size(); })
    return request.size();
  else
    return static_cast<size_t>(request);
}
/// A request's indices for error messages (none for a request that is only a count).
template <class Request>
std::vector<size_t> request_indices(const Request& request) {
  if constexpr (std::is_convertible_v<Request, std::vector<size_t>>)
    return request;
  else
    return {};
}
}  // namespace detail

template <class Batch, class Request = std::vector<size_t>>
class DataLoaderBase;

/// The input iterator of a DataLoader; *it is the current batch.
template <class Batch, class Request = std::vector<size_t>>
class Iterator {
 public:
  using iterator_category = std::input_iterator_tag;
  using value_type = Batch;
  using difference_type = std::ptrdiff_t;
  using pointer = Batch*;
  using reference = Batch&;

  Iterator() = default;  // the end sentinel
  explicit Iterator(DataLoaderBase<Batch, Request>* loader) : loader_(loader) {}
  Batch& operator*() const { return *loader_->current_; }
  Batch* operator->() const { return &*loader_->current_; }
  Iterator& operator++() {
    loader_->advance();
    return *this;
  }
  bool operator==(const Iterator& o) const { return at_end() == o.at_end(); }
  bool operator!=(const Iterator& o) const { return !(*this == o); }

 private:
  bool at_end() const { return loader_ == nullptr || !loader_->current_.has_value(); }
  DataLoaderBase<Batch, Request>* loader_ = nullptr;
};

/// The batch machinery shared by every loader: epochs, workers, ordering. A loader says where
/// requests come from (get_batch_request) and how one is loaded (load).
template <class Batch, class Request>
class DataLoaderBase {
 public:
  using BatchType = Batch;
  using BatchRequestType = Request;
  virtual ~DataLoaderBase() = default;

  /// Starts a new epoch (reshuffling) and returns an iterator at its first batch.
  Iterator<Batch, Request> begin() {
    cancel_epoch();
    start_epoch(next_epoch_);
    epoch_ = next_epoch_++;
    started_ = true;
    issued_ = delivered_ = in_flight_ = 0;
    exhausted_ = false;
    current_.reset();
    advance();
    return Iterator<Batch, Request>(this);
  }
  Iterator<Batch, Request> end() { return Iterator<Batch, Request>(); }

  /// Chooses the epoch the next begin() starts (its shuffle and random transforms).
  void set_epoch(uint64_t epoch) { next_epoch_ = epoch; }
  /// The epoch of the current (or last) iteration.
  uint64_t epoch() const { return epoch_; }
  uint64_t seed() const { return seed_; }
  const DataLoaderOptions& options() const { return options_; }

  /// Stops and joins the worker threads (the destructor does this too).
  void join() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stop_) return;
      stop_ = true;
      jobs_.clear();
    }
    jobs_cv_.notify_all();
    for (auto& t : threads_) t.join();
    threads_.clear();
  }

 protected:
  struct Job {
    uint64_t generation;
    size_t seq;
    uint64_t epoch;
    Request request;
  };
  struct Result {
    std::optional<Batch> batch;  // nullopt without an error: a stateful dataset is exhausted
    std::string error;           // set when loading failed
  };

  DataLoaderBase(DataLoaderOptions options, uint64_t seed) : options_(std::move(options)), seed_(seed) {
    EMBER_CHECK(options_.batch_size() > 0,
                "batch_size should be a positive integer value, but got batch_size=", options_.batch_size());
    EMBER_CHECK(!options_.timeout() || options_.timeout()->count() >= 0,
                "timeout option should be non-negative");
    max_jobs_ = options_.max_jobs().value_or(2 * options_.workers());
    if (max_jobs_ == 0) max_jobs_ = 1;
    pin_memory_ = detail::check_pin_memory(options_.pin_memory());
  }

  /// Prepares epoch `epoch`: resets the sampler (or the stateful dataset).
  virtual void start_epoch(uint64_t epoch) = 0;
  /// The next request of this epoch, or nullopt when there are no more.
  virtual std::optional<Request> get_batch_request() = 0;
  /// Loads one batch on the current thread (a worker's or the caller's dataset).
  virtual Result load(int worker, uint64_t epoch, const Request& request) = 0;

  bool pin_memory_ = false;  // batches go to pinned memory (check_pin_memory)

  /// The body of worker thread `id`; load() there uses that worker's dataset copy.
  void worker_loop(int id) {
    for (;;) {
      std::optional<Job> job;  // optional: a request type need not be default-constructible
      {
        std::unique_lock<std::mutex> lock(mu_);
        jobs_cv_.wait(lock, [&] { return stop_ || !jobs_.empty(); });
        if (stop_) return;
        job.emplace(std::move(jobs_.front()));
        jobs_.pop_front();
      }
      Result r = load(id, job->epoch, job->request);
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (job->generation == generation_) results_.emplace(job->seq, std::move(r));
      }
      results_cv_.notify_all();
    }
  }

  template <class F>
  void start_workers(F&& make_worker) {
    for (size_t w = 0; w < options_.workers(); ++w) threads_.emplace_back(make_worker(static_cast<int>(w)));
  }

 private:
  friend class Iterator<Batch, Request>;

  /// The next request, or nullopt once the epoch has no more.
  std::optional<Request> next_request() {
    if (exhausted_) return std::nullopt;
    auto req = get_batch_request();
    if (!req) exhausted_ = true;
    return req;
  }

  /// Keeps max_jobs batches queued for the workers.
  void fill() {
    while (in_flight_ < max_jobs_) {
      auto req = next_request();
      if (!req) return;
      {
        std::lock_guard<std::mutex> lock(mu_);
        jobs_.push_back(Job{generation_, issued_++, epoch_, std::move(*req)});
      }
      ++in_flight_;
      jobs_cv_.notify_one();
    }
  }

  /// Moves to the next batch (current_ empty at the end of the epoch).
  void advance() {
    current_.reset();
    if (!started_) return;
    for (;;) {
      Result r;
      if (threads_.empty()) {
        auto req = next_request();
        if (!req) return finish();
        r = load(-1, epoch_, *req);
      } else {
        fill();
        if (in_flight_ == 0) return finish();
        r = wait_result();
        --in_flight_;
      }
      if (!r.error.empty()) {
        finish();
        ::ember::detail::throw_error(r.error);
      }
      if (r.batch) {
        current_ = std::move(r.batch);
        if (!threads_.empty()) fill();
        return;
      }
      // A stateful dataset has no more batches: ask for none, deliver what is in flight.
      exhausted_ = true;
    }
  }

  /// Waits for the next batch in order (or any, without enforce_ordering).
  Result wait_result() {
    std::unique_lock<std::mutex> lock(mu_);
    auto ready = [&] {
      return options_.enforce_ordering() ? results_.count(delivered_) > 0 : !results_.empty();
    };
    if (options_.timeout() && options_.timeout()->count() > 0) {
      if (!results_cv_.wait_for(lock, *options_.timeout(), ready)) {
        lock.unlock();
        finish();
        detail::throw_timeout(*options_.timeout());
      }
    } else {
      results_cv_.wait(lock, ready);
    }
    auto it = options_.enforce_ordering() ? results_.find(delivered_) : results_.begin();
    Result r = std::move(it->second);
    results_.erase(it);
    ++delivered_;
    return r;
  }

  /// Ends the epoch: later ++ yields nothing until the next begin().
  void finish() {
    started_ = false;
    cancel_epoch();
  }

  /// Drops the current epoch's queued jobs and results. Jobs already running finish on their
  /// worker and are discarded by generation (no waiting: a timed-out worker may be stuck).
  void cancel_epoch() {
    std::lock_guard<std::mutex> lock(mu_);
    ++generation_;
    jobs_.clear();
    results_.clear();
    in_flight_ = 0;
  }

  DataLoaderOptions options_;
  uint64_t seed_;
  size_t max_jobs_ = 1;
  std::optional<Batch> current_;
  // Epoch state, touched only by the consuming thread.
  uint64_t next_epoch_ = 0, epoch_ = 0;
  bool started_ = false, exhausted_ = false;
  size_t issued_ = 0, delivered_ = 0, in_flight_ = 0;
  // Shared with the workers, under mu_.
  std::mutex mu_;
  std::condition_variable jobs_cv_, results_cv_;
  std::deque<Job> jobs_;
  std::map<size_t, Result> results_;
  uint64_t generation_ = 0;
  bool stop_ = false;

 protected:
  std::vector<std::thread> threads_;
};

namespace detail {
/// The request type a sampler produces for `Dataset`: index lists for index-requesting
/// datasets (their get_batch takes ArrayRef<size_t>), the dataset's own type otherwise.
template <class Dataset>
using default_request_t = std::conditional_t<std::is_same_v<typename Dataset::BatchRequestType, ArrayRef<size_t>>,
                                             std::vector<size_t>, typename Dataset::BatchRequestType>;
}  // namespace detail

namespace detail {
/// Runs `get` (which returns an optional batch) for a loader, turning an exception into the
/// Result's error text, which names the worker and the sample.
template <class Result, class Get, class Request>
Result load_batch(Get&& get, int worker, const Request& request, bool pin_memory) {
  clear_failed_sample_index();
  try {
    Result r{get(), {}};
    if (pin_memory && r.batch) pin_batch(*r.batch);  // on the worker, off the consumer's path
    return r;
  } catch (const std::exception& e) {
    return Result{std::nullopt, loader_error(worker, e, failed_sample_index(), request_indices(request))};
  } catch (...) {  // not a std::exception: still must not escape the worker thread
    std::runtime_error unknown("unknown exception");
    return Result{std::nullopt, loader_error(worker, unknown, failed_sample_index(), request_indices(request))};
  }
}

template <class Dataset>
size_t dataset_size(const Dataset& d) {
  auto n = d.size();
  EMBER_CHECK(n.has_value(), "Expected the dataset to be sized in order to construct the Sampler");
  return *n;
}
inline uint64_t loader_seed(const DataLoaderOptions& o) {
  return o.seed() ? *o.seed() : seed_from_default_generator();
}
/// The default sampler's seed, a different stream from the transforms' (mix(seed, epoch)).
inline uint64_t sampler_seed(uint64_t loader_seed) { return mix(loader_seed, 0x53414D504C4552ULL); }
/// Whether T is a sampler of some request type.
template <class T>
concept AnySampler = requires { typename T::BatchRequestType; } &&
                     std::is_base_of_v<samplers::Sampler<typename T::BatchRequestType>, T>;
}  // namespace detail

/// A DataLoader over a stateless `Dataset` with requests from a Sampler<Request>; workers each
/// load from their own copy of the dataset (libtorch's StatelessDataLoader).
template <class Dataset, class Request = detail::default_request_t<Dataset>>
class DataLoader : public DataLoaderBase<typename Dataset::BatchType, Request> {
 public:
  using Base = DataLoaderBase<typename Dataset::BatchType, Request>;
  using typename Base::Result;
  using SamplerType = samplers::Sampler<Request>;

  DataLoader(Dataset dataset, std::shared_ptr<SamplerType> sampler, DataLoaderOptions options, uint64_t seed)
      : Base(std::move(options), seed), sampler_(std::move(sampler)) {
    EMBER_CHECK(sampler_ != nullptr, "DataLoader: the sampler must not be null");
    size_t workers = this->options().workers();
    datasets_.reserve(std::max<size_t>(workers, 1));
    if constexpr (std::is_copy_constructible_v<Dataset>) {
      for (size_t w = 1; w < workers; ++w) datasets_.emplace_back(dataset);
    } else {
      EMBER_CHECK(workers <= 1, "DataLoader: ", workers,
                  " workers need a copyable dataset (each worker loads "
                  "from its own copy, as libtorch's)");
    }
    datasets_.emplace_back(std::move(dataset));
    this->start_workers([this](int id) { return std::thread([this, id] { this->worker_loop(id); }); });
  }
  ~DataLoader() override { this->join(); }
  DataLoader(const DataLoader&) = delete;
  DataLoader& operator=(const DataLoader&) = delete;

  /// The dataset the calling thread loads from (workers hold copies).
  Dataset& dataset() { return datasets_.back(); }
  SamplerType& sampler() { return *sampler_; }

 protected:
  void start_epoch(uint64_t epoch) override {
    sampler_->set_epoch(epoch);
    sampler_->reset(std::nullopt);
  }

  /// The sampler's next request; nullopt at the end, or for a short last batch with drop_last.
  std::optional<Request> get_batch_request() override {
    auto req = sampler_->next(this->options().batch_size());
    if (!req) return std::nullopt;
    size_t n = detail::request_size(*req);
    if (n == 0 || (this->options().drop_last() && n < this->options().batch_size())) return std::nullopt;
    return req;
  }

  Result load(int worker, uint64_t epoch, const Request& request) override {
    Dataset& ds = datasets_[worker < 0 ? datasets_.size() - 1 : static_cast<size_t>(worker)];
    return detail::load_batch<Result>(
        [&] {
          LoaderSeedGuard seed_guard(this->seed(), epoch);
          return std::optional<typename Dataset::BatchType>(ds.get_batch(request));
        },
        worker, request, this->pin_memory_);
  }

 private:
  std::shared_ptr<SamplerType> sampler_;
  std::vector<Dataset> datasets_;  // one per worker (or one for the calling thread)
};

/// libtorch's name for a loader over a stateless dataset with a `Sampler`.
template <class Dataset, class Sampler = samplers::RandomSampler>
using StatelessDataLoader = DataLoader<Dataset, typename Sampler::BatchRequestType>;

/// A DataLoader over a stateful dataset (one whose get_batch returns optional<Batch>): each
/// epoch resets the dataset and asks it for batch_size examples until it answers nullopt. The
/// workers share the one dataset, which must be safe to call from several threads (as
/// libtorch's StatefulDataLoader requires; ChunkDataset is).
template <class Dataset>
class StatefulDataLoader
    : public DataLoaderBase<typename Dataset::BatchType::value_type, typename Dataset::BatchRequestType> {
 public:
  using Base = DataLoaderBase<typename Dataset::BatchType::value_type, typename Dataset::BatchRequestType>;
  using typename Base::Result;
  using typename Base::BatchRequestType;

  StatefulDataLoader(Dataset dataset, DataLoaderOptions options, uint64_t seed)
      : Base(std::move(options), seed), dataset_(std::make_shared<Dataset>(std::move(dataset))) {
    this->start_workers([this](int id) { return std::thread([this, id] { this->worker_loop(id); }); });
  }
  ~StatefulDataLoader() override { this->join(); }
  StatefulDataLoader(const StatefulDataLoader&) = delete;
  StatefulDataLoader& operator=(const StatefulDataLoader&) = delete;

  Dataset& dataset() { return *dataset_; }

 protected:
  void start_epoch(uint64_t) override { dataset_->reset(); }
  std::optional<BatchRequestType> get_batch_request() override {
    return static_cast<BatchRequestType>(this->options().batch_size());
  }
  Result load(int worker, uint64_t epoch, const BatchRequestType& request) override {
    return detail::load_batch<Result>(
        [&] {
          LoaderSeedGuard seed_guard(this->seed(), epoch);
          return dataset_->get_batch(request);
        },
        worker, request, this->pin_memory_);
  }

 private:
  std::shared_ptr<Dataset> dataset_;
};


/// A loader over `dataset`: options.sampler() if set, else RandomSampler unless
/// shuffle(false) (libtorch's make_data_loader(dataset, options) shuffles).
template <class Dataset>
requires(!detail::AnySampler<Dataset> && !Dataset::is_stateful)
    std::unique_ptr<DataLoader<Dataset>> make_data_loader(Dataset dataset, DataLoaderOptions options = {}) {
  uint64_t seed = detail::loader_seed(options);
  std::shared_ptr<samplers::Sampler<>> sampler = options.sampler();
  if (!sampler) {
    size_t n = detail::dataset_size(dataset);
    if (options.shuffle().value_or(true))
      sampler =
          std::make_shared<samplers::RandomSampler>(static_cast<int64_t>(n), detail::sampler_seed(seed));
    else
      sampler = std::make_shared<samplers::SequentialSampler>(n);
  }
  return std::make_unique<DataLoader<Dataset>>(std::move(dataset), std::move(sampler), std::move(options),
                                               seed);
}

/// A loader with an explicit sampler object (libtorch's make_data_loader(dataset, sampler,
/// options)); a StreamSampler's requests are counts, for a StreamDataset.
template <class Dataset, class Sampler>
requires detail::AnySampler<Sampler>
    std::unique_ptr<DataLoader<Dataset, typename Sampler::BatchRequestType>> make_data_loader(
        Dataset dataset, Sampler sampler, DataLoaderOptions options = {}) {
  using Request = typename Sampler::BatchRequestType;
  uint64_t seed = detail::loader_seed(options);
  return std::make_unique<DataLoader<Dataset, Request>>(
      std::move(dataset), std::make_shared<Sampler>(std::move(sampler)), std::move(options), seed);
}

/// libtorch's make_data_loader<SamplerType>(dataset, options): SamplerType(dataset size).
template <class Sampler, class Dataset>
requires detail::AnySampler<Sampler>
    std::unique_ptr<DataLoader<Dataset, typename Sampler::BatchRequestType>> make_data_loader(
        Dataset dataset, DataLoaderOptions options = {}) {
  size_t n = detail::dataset_size(dataset);
  if (!options.seed()) options.seed(detail::seed_from_default_generator());
  if constexpr (std::is_same_v<Sampler, samplers::RandomSampler>)
    return make_data_loader(std::move(dataset),
                            Sampler(static_cast<int64_t>(n), detail::sampler_seed(detail::loader_seed(options))),
                            std::move(options));
  else
    return make_data_loader(std::move(dataset), Sampler(n), std::move(options));
}

/// A loader over a stateful dataset (libtorch's make_data_loader for one whose is_stateful).
template <class Dataset>
requires(Dataset::is_stateful) std::unique_ptr<StatefulDataLoader<Dataset>> make_data_loader(
    Dataset dataset, DataLoaderOptions options = {}) {
  uint64_t seed = detail::loader_seed(options);
  return std::make_unique<StatefulDataLoader<Dataset>>(std::move(dataset), std::move(options), seed);
}

}  // namespace ember::data
