// DataLoader: iterates a dataset in batches chosen by a sampler, optionally loading them on
// worker threads ahead of the consumer (libtorch's make_data_loader / StatelessDataLoader,
// with PyTorch's shuffle, seed, drop_last and pin_memory options).
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
}  // namespace detail

template <class Batch>
class DataLoaderBase;

/// The input iterator of a DataLoader; *it is the current batch.
template <class Batch>
class Iterator {
 public:
  using iterator_category = std::input_iterator_tag;
  using value_type = Batch;
  using difference_type = std::ptrdiff_t;
  using pointer = Batch*;
  using reference = Batch&;

  Iterator() = default;  // the end sentinel
  explicit Iterator(DataLoaderBase<Batch>* loader) : loader_(loader) {}
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
  DataLoaderBase<Batch>* loader_ = nullptr;
};

/// The batch machinery shared by every dataset type: sampler, epochs, workers, ordering.
template <class Batch>
class DataLoaderBase {
 public:
  using BatchType = Batch;
  using BatchRequestType = std::vector<size_t>;
  virtual ~DataLoaderBase() = default;

  /// Starts a new epoch (reshuffling) and returns an iterator at its first batch.
  Iterator<Batch> begin() {
    cancel_epoch();
    sampler_->set_epoch(next_epoch_);
    sampler_->reset(std::nullopt);
    epoch_ = next_epoch_++;
    started_ = true;
    issued_ = delivered_ = in_flight_ = 0;
    exhausted_ = false;
    current_.reset();
    advance();
    return Iterator<Batch>(this);
  }
  Iterator<Batch> end() { return Iterator<Batch>(); }

  /// Chooses the epoch the next begin() starts (its shuffle and random transforms).
  void set_epoch(uint64_t epoch) { next_epoch_ = epoch; }
  /// The epoch of the current (or last) iteration.
  uint64_t epoch() const { return epoch_; }
  uint64_t seed() const { return seed_; }
  const DataLoaderOptions& options() const { return options_; }
  samplers::Sampler<>& sampler() { return *sampler_; }

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
    std::vector<size_t> indices;
  };
  struct Result {
    std::optional<Batch> batch;
    std::string error;  // set when loading failed
  };

  DataLoaderBase(std::shared_ptr<samplers::Sampler<>> sampler, DataLoaderOptions options, uint64_t seed)
      : sampler_(std::move(sampler)), options_(std::move(options)), seed_(seed) {
    EMBER_CHECK(options_.batch_size() > 0,
                "batch_size should be a positive integer value, but got batch_size=", options_.batch_size());
    EMBER_CHECK(!options_.timeout() || options_.timeout()->count() >= 0,
                "timeout option should be non-negative");
    max_jobs_ = options_.max_jobs().value_or(2 * options_.workers());
    if (max_jobs_ == 0) max_jobs_ = 1;
    pin_memory_ = detail::check_pin_memory(options_.pin_memory());
  }

  /// Loads one batch on the current thread (a worker's or the caller's dataset).
  virtual Result load(int worker, uint64_t epoch, const std::vector<size_t>& indices) = 0;

  bool pin_memory_ = false;  // batches go to pinned memory (check_pin_memory)

  /// The body of worker thread `id`; load() there uses that worker's dataset copy.
  void worker_loop(int id) {
    for (;;) {
      Job job;
      {
        std::unique_lock<std::mutex> lock(mu_);
        jobs_cv_.wait(lock, [&] { return stop_ || !jobs_.empty(); });
        if (stop_) return;
        job = std::move(jobs_.front());
        jobs_.pop_front();
      }
      Result r = load(id, job.epoch, job.indices);
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (job.generation == generation_) results_.emplace(job.seq, std::move(r));
      }
      results_cv_.notify_all();
    }
  }

  template <class F>
  void start_workers(F&& make_worker) {
    for (size_t w = 0; w < options_.workers(); ++w) threads_.emplace_back(make_worker(static_cast<int>(w)));
  }

 private:
  friend class Iterator<Batch>;

  /// The sampler's next request, or nullopt at the end (or a short last batch with drop_last).
  std::optional<std::vector<size_t>> next_request() {
    if (exhausted_) return std::nullopt;
    auto req = sampler_->next(options_.batch_size());
    if (!req || req->empty() || (options_.drop_last() && req->size() < options_.batch_size())) {
      exhausted_ = true;
      return std::nullopt;
    }
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
      fill();
    }
    if (!r.error.empty()) {
      finish();
      ::ember::detail::throw_error(r.error);
    }
    current_ = std::move(r.batch);
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

  std::shared_ptr<samplers::Sampler<>> sampler_;
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

/// A DataLoader over `Dataset`; workers each load from their own copy of it.
template <class Dataset>
class DataLoader : public DataLoaderBase<typename Dataset::BatchType> {
 public:
  using Base = DataLoaderBase<typename Dataset::BatchType>;
  using typename Base::Result;

  DataLoader(Dataset dataset, std::shared_ptr<samplers::Sampler<>> sampler, DataLoaderOptions options,
             uint64_t seed)
      : Base(std::move(sampler), std::move(options), seed) {
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

 protected:
  Result load(int worker, uint64_t epoch, const std::vector<size_t>& indices) override {
    Dataset& ds = datasets_[worker < 0 ? datasets_.size() - 1 : static_cast<size_t>(worker)];
    clear_failed_sample_index();
    try {
      LoaderSeedGuard seed_guard(this->seed(), epoch);
      Result r{ds.get_batch(indices), {}};
      if (this->pin_memory_) detail::pin_batch(*r.batch);  // on the worker, off the consumer's path
      return r;
    } catch (const std::exception& e) {
      return Result{std::nullopt, detail::loader_error(worker, e, failed_sample_index(), indices)};
    } catch (...) {  // not a std::exception: still must not escape the worker thread
      std::runtime_error unknown("unknown exception");
      return Result{std::nullopt, detail::loader_error(worker, unknown, failed_sample_index(), indices)};
    }
  }

 private:
  std::vector<Dataset> datasets_;  // one per worker (or one for the calling thread)
};

namespace detail {
template <class Dataset>
size_t dataset_size(const Dataset& d) {
  auto n = d.size();
  EMBER_CHECK(n.has_value(), "make_data_loader: a dataset without a size needs an explicit sampler");
  return *n;
}
inline uint64_t loader_seed(const DataLoaderOptions& o) {
  return o.seed() ? *o.seed() : seed_from_default_generator();
}
/// The default sampler's seed, a different stream from the transforms' (mix(seed, epoch)).
inline uint64_t sampler_seed(uint64_t loader_seed) { return mix(loader_seed, 0x53414D504C4552ULL); }
}  // namespace detail

/// A loader over `dataset`: options.sampler() if set, else RandomSampler unless
/// shuffle(false) (libtorch's make_data_loader(dataset, options) shuffles).
template <class Dataset>
requires(!std::is_base_of_v<samplers::Sampler<>, Dataset>)
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

/// libtorch's make_data_loader<SamplerType>(dataset, options): SamplerType(dataset size).
template <class Sampler, class Dataset>
requires std::is_base_of_v<samplers::Sampler<>, Sampler> std::unique_ptr<DataLoader<Dataset>>
make_data_loader(Dataset dataset, DataLoaderOptions options = {}) {
  size_t n = detail::dataset_size(dataset);
  if (!options.seed()) options.seed(detail::seed_from_default_generator());
  std::shared_ptr<samplers::Sampler<>> sampler;
  if constexpr (std::is_same_v<Sampler, samplers::RandomSampler>)
    sampler = std::make_shared<Sampler>(static_cast<int64_t>(n),
                                        detail::sampler_seed(detail::loader_seed(options)));
  else
    sampler = std::make_shared<Sampler>(n);
  options.sampler(sampler);
  return make_data_loader(std::move(dataset), std::move(options));
}

/// A loader with an explicit sampler object.
template <class Dataset, class Sampler>
requires std::is_base_of_v<samplers::Sampler<>, Sampler> std::unique_ptr<DataLoader<Dataset>>
make_data_loader(Dataset dataset, Sampler sampler, DataLoaderOptions options = {}) {
  options.sampler(std::make_shared<Sampler>(std::move(sampler)));
  return make_data_loader(std::move(dataset), std::move(options));
}

}  // namespace ember::data
