// ChunkDataset: a stateful dataset over data stored in chunks (files, shards), as libtorch's
// datasets::ChunkDataset. A ChunkDataReader reads one chunk as a vector of examples; the
// dataset's preloader threads take chunk indices from the chunk sampler
// (cross_chunk_shuffle_count at a time, whose examples are mixed), read them, shuffle their
// examples with the example sampler into batches of batch_size and queue them, holding at most
// cache_size examples; get_batch() hands out the queued batches and nullopt once every chunk
// is read and the queue is empty. A batch may be shorter than batch_size at the end of a chunk
// group when the consumer is faster than the readers (libtorch's behaviour too).
//
// Iterate it with a StatefulDataLoader, through make_shared_dataset (a ChunkDataset holds
// threads and cannot be moved):
//   auto loader = make_data_loader(make_shared_dataset<ChunkDataset<Reader>>(reader,
//       RandomSampler(0), RandomSampler(0), ChunkDatasetOptions(/*preloaders*/ 2, /*batch*/ 32)),
//       DataLoaderOptions(32));
// read_chunk is called from several preloader threads at once: the reader must allow that.
#pragma once

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <iterator>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "ember/core/arg.h"
#include "ember/core/error.h"
#include "ember/data/datasets/stateful.h"
#include "ember/data/samplers/random.h"

namespace ember::data::datasets {

/// Reads a dataset's chunks (libtorch's ChunkDataReader). Subclasses define read_chunk,
/// chunk_count and reset.
template <class ExampleType_, class ChunkType_ = std::vector<ExampleType_>>
class ChunkDataReader {
 public:
  virtual ~ChunkDataReader() = default;
  using ChunkType = ChunkType_;
  using ExampleType = ExampleType_;
  /// The batch type a ChunkDataset over this reader produces (a chunk's type).
  using BatchType = ChunkType;

  /// The examples of chunk `chunk_index` (called from several preloader threads at once).
  virtual ChunkType read_chunk(size_t chunk_index) = 0;
  /// The number of chunks.
  virtual size_t chunk_count() = 0;
  /// Called at the start of every epoch (unless a checkpoint was just loaded).
  virtual void reset() = 0;
};

/// The options of a ChunkDataset, checked with libtorch's messages.
struct ChunkDatasetOptions {
  ChunkDatasetOptions() = delete;
  ChunkDatasetOptions(size_t preloader_count, size_t batch_size, size_t cache_size = 2048,
                      size_t cross_chunk_shuffle_count = 1)
      : preloader_count_(preloader_count),
        batch_size_(batch_size),
        cache_size_(cache_size),
        cross_chunk_shuffle_count_(cross_chunk_shuffle_count) {
    EMBER_CHECK(preloader_count_ > 0, "Preloader count is 0. At least one preloader needs to be specified.");
    EMBER_CHECK(batch_size_ > 0, "Batch size is 0. A positive batch size needs to be specified.");
    EMBER_CHECK(cache_size_ > 0, "Cache size is 0. A positive cache size needs to be specified.");
    EMBER_CHECK(cache_size_ >= batch_size_,
                "Cache size is less than batch size. Cache needs to be large enough to hold at least one batch.");
    EMBER_CHECK(cross_chunk_shuffle_count_ > 0, "cross_chunk_shuffle_count needs to be greater than 0.");
  }

  /// Threads reading chunks ahead of the consumer.
  EMBER_ARG(size_t, preloader_count);
  /// Examples per batch (get_batch must be asked for exactly this many).
  EMBER_ARG(size_t, batch_size);
  /// The most examples held in the queue before the preloaders wait.
  EMBER_ARG(size_t, cache_size) = 2048;
  /// Chunks read together and shuffled as one.
  EMBER_ARG(size_t, cross_chunk_shuffle_count) = 1;
};

namespace detail {

/// The queue between the preloaders and get_batch: batches cut from shuffled chunk data, or an
/// exception a preloader caught (rethrown to the consumer in order).
template <class UnwrappedBatch, class ExampleSampler>
class BatchDataBuffer {
 public:
  BatchDataBuffer(size_t batch_size, ExampleSampler& example_sampler, size_t capacity)
      : batch_size_(batch_size), example_sampler_(example_sampler), capacity_(capacity) {}

  /// The next batch; nullopt once the preloaders are done (or stopped) and the queue is empty.
  std::optional<UnwrappedBatch> get_batch() {
    std::unique_lock<std::mutex> lock(mu_);
    readable_.wait(lock, [&] { return !queue_.empty() || finished_ || stopped_; });
    if (queue_.empty()) return std::nullopt;
    Entry entry = std::move(queue_.front());
    queue_.pop_front();
    examples_ -= entry.batch.size();
    lock.unlock();
    writable_.notify_all();
    if (entry.error) std::rethrow_exception(entry.error);
    return std::move(entry.batch);
  }

  /// Queues one chunk group's examples, shuffled by the example sampler: first topping up a
  /// short batch at the back of the queue, then in batches of batch_size. Waits while the
  /// queue holds cache_size examples or more.
  void add_chunk_data(UnwrappedBatch data) {
    std::unique_lock<std::mutex> lock(mu_);
    writable_.wait(lock, [&] { return examples_ < capacity_ || stopped_; });
    if (stopped_) return;
    const size_t n = data.size();
    example_sampler_.reset(n);
    size_t remaining = n;
    auto fill = [&](size_t count, UnwrappedBatch& batch) {
      auto indices = example_sampler_.next(count);
      EMBER_CHECK(indices && indices->size() == count, "ChunkDataset: the example sampler gave ",
                  indices ? indices->size() : 0, " indices where ", count, " were needed");
      for (size_t i : *indices) {
        EMBER_CHECK(i < n, "Index out of range");
        batch.emplace_back(std::move(data[i]));
      }
      remaining -= count;
    };
    if (!queue_.empty() && !queue_.back().error && queue_.back().batch.size() < batch_size_)
      fill(std::min(batch_size_ - queue_.back().batch.size(), remaining), queue_.back().batch);
    while (remaining > 0) {
      UnwrappedBatch batch;
      size_t count = std::min(batch_size_, remaining);
      batch.reserve(count);
      fill(count, batch);
      queue_.push_back(Entry{std::move(batch), nullptr});
    }
    examples_ += n;
    lock.unlock();
    readable_.notify_all();
  }

  /// Queues a preloader's exception.
  void add_chunk_data(std::exception_ptr error) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      queue_.push_back(Entry{UnwrappedBatch(), std::move(error)});
    }
    readable_.notify_all();
  }

  /// Every chunk is queued: readers get nullopt once the queue is empty.
  void finish() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      finished_ = true;
    }
    readable_.notify_all();
  }

  /// Abandons the epoch: waiting preloaders and readers return.
  void stop() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopped_ = true;
      queue_.clear();
      examples_ = 0;
    }
    readable_.notify_all();
    writable_.notify_all();
  }

 private:
  struct Entry {
    UnwrappedBatch batch;
    std::exception_ptr error;
  };

  const size_t batch_size_;
  ExampleSampler& example_sampler_;  // used only under mu_
  const size_t capacity_;
  std::mutex mu_;
  std::condition_variable readable_, writable_;
  std::deque<Entry> queue_;
  size_t examples_ = 0;
  bool finished_ = false, stopped_ = false;
};

}  // namespace detail

template <class ChunkReader, class ChunkSampler = samplers::RandomSampler,
          class ExampleSampler = samplers::RandomSampler>
class ChunkDataset final
    : public StatefulDataset<ChunkDataset<ChunkReader, ChunkSampler, ExampleSampler>,
                             typename ChunkReader::BatchType, size_t> {
 public:
  using BatchType = std::optional<typename ChunkReader::BatchType>;
  using UnwrappedBatchType = typename ChunkReader::BatchType;
  using BatchRequestType = size_t;
  using ChunkSamplerType = ChunkSampler;
  using ExampleSamplerType = ExampleSampler;

  ChunkDataset(ChunkReader chunk_reader, ChunkSampler chunk_sampler, ExampleSampler example_sampler,
               ChunkDatasetOptions options,
               std::function<void(UnwrappedBatchType&)> preprocessing_policy = std::function<void(UnwrappedBatchType&)>())
      : chunk_reader_(std::move(chunk_reader)),
        chunk_sampler_(std::move(chunk_sampler)),
        example_sampler_(std::move(example_sampler)),
        options_(std::move(options)),
        preprocessing_policy_(std::move(preprocessing_policy)) {}

  ~ChunkDataset() override { stop_preloaders(); }
  ChunkDataset(const ChunkDataset&) = delete;
  ChunkDataset& operator=(const ChunkDataset&) = delete;

  /// The next batch of this epoch (nullopt when it is over); `batch_size` must be the
  /// options' batch_size. Safe to call from several threads.
  BatchType get_batch(size_t batch_size) override {
    std::shared_ptr<Buffer> buffer;
    {
      std::lock_guard<std::mutex> lock(buffer_guard_);
      buffer = batch_buffer_;
    }
    EMBER_CHECK(buffer != nullptr, "Dataset needs to call reset() before calling get_batch().");
    EMBER_CHECK(batch_size == options_.batch_size(),
                "The requested batch size does not match with the initialized batch size.\n"
                " The requested batch size is ",
                batch_size, ", while the dataset is created with batch size equal to ", options_.batch_size());
    return buffer->get_batch();
  }
  BatchType get_batch() { return get_batch(options_.batch_size()); }

  /// Starts an epoch: stops the preloaders of the last one, resets the reader and the chunk
  /// sampler (not after load(): the loaded position is kept), and starts preloading.
  void reset() override {
    stop_preloaders();
    if (!load_checkpoint_) {
      chunk_reader_.reset();
      chunk_sampler_.reset(chunk_reader_.chunk_count());
    }
    load_checkpoint_ = false;
    {
      std::lock_guard<std::mutex> lock(buffer_guard_);
      batch_buffer_ = std::make_shared<Buffer>(options_.batch_size(), example_sampler_, options_.cache_size());
    }
    quit_ = false;
    running_preloaders_ = options_.preloader_count();
    for (size_t i = 0; i < options_.preloader_count(); ++i)
      preload_threads_.emplace_back([this, buffer = batch_buffer_] { preloader(*buffer); });
  }

  /// A chunk dataset's size is not known.
  std::optional<size_t> size() const override { return std::nullopt; }

  ChunkSamplerType& chunk_sampler() { return chunk_sampler_; }

  /// Saves the chunk sampler's position (which chunks this epoch has handed out).
  void save(serialize::OutputArchive& archive) const override {
    std::lock_guard<std::mutex> lock(chunk_index_guard_);
    chunk_sampler_.save(archive);
  }
  /// Restores it; the next reset() continues from there instead of starting over.
  void load(serialize::InputArchive& archive) override {
    std::lock_guard<std::mutex> lock(chunk_index_guard_);
    chunk_sampler_.load(archive);
    load_checkpoint_ = true;
  }

 private:
  using Buffer = detail::BatchDataBuffer<UnwrappedBatchType, ExampleSampler>;

  /// One preloader thread: reads chunk groups until the chunk sampler runs out.
  void preloader(Buffer& buffer) {
    while (!quit_) {
      std::vector<size_t> chunk_idx;
      {
        std::lock_guard<std::mutex> lock(chunk_index_guard_);
        auto next = chunk_sampler_.next(options_.cross_chunk_shuffle_count());
        if (!next || next->empty()) break;
        chunk_idx = std::move(*next);
      }
      std::exception_ptr error;
      try {
        UnwrappedBatchType data = chunk_reader_.read_chunk(chunk_idx[0]);
        for (size_t i = 1; i < chunk_idx.size(); ++i) {
          UnwrappedBatchType more = chunk_reader_.read_chunk(chunk_idx[i]);
          std::move(more.begin(), more.end(), std::back_inserter(data));
        }
        if (preprocessing_policy_) preprocessing_policy_(data);
        if (!data.empty()) buffer.add_chunk_data(std::move(data));
      } catch (...) {
        error = std::current_exception();
      }
      // Queued only once the handler has ended, so this thread keeps no reference to the
      // exception: the consumer that rethrows it releases it last. (libstdc++'s reference count
      // is invisible to ThreadSanitizer; a last release here would read as a race on its message.)
      if (error) buffer.add_chunk_data(std::move(error));
    }
    if (--running_preloaders_ == 0) buffer.finish();
  }

  void stop_preloaders() {
    quit_ = true;
    std::shared_ptr<Buffer> buffer;
    {
      std::lock_guard<std::mutex> lock(buffer_guard_);
      buffer = batch_buffer_;
    }
    if (buffer) buffer->stop();
    for (auto& t : preload_threads_) t.join();
    preload_threads_.clear();
  }

  ChunkReader chunk_reader_;
  ChunkSampler chunk_sampler_;
  ExampleSampler example_sampler_;
  ChunkDatasetOptions options_;
  std::function<void(UnwrappedBatchType&)> preprocessing_policy_;

  mutable std::mutex chunk_index_guard_;  // the chunk sampler, shared by the preloaders
  std::mutex buffer_guard_;               // batch_buffer_ itself (readers copy the pointer)
  std::shared_ptr<Buffer> batch_buffer_;
  std::vector<std::thread> preload_threads_;
  std::atomic<bool> quit_{false};
  std::atomic<size_t> running_preloaders_{0};
  bool load_checkpoint_ = false;
};

}  // namespace ember::data::datasets
