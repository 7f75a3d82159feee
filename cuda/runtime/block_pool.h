// The bookkeeping of ember's two caching allocators, with no CUDA in it: BlockPool keeps a
// device's memory (PyTorch's CUDA caching allocator: rounded sizes, small and large pools,
// best fit, splitting and merging, blocks tied to a stream), HostBlockPool keeps pinned host
// memory (blocks cached by power-of-two size). Both reach the hardware only through a
// MemoryBackend, so the tests drive them on the CPU with a fake one (tests/core/
// test_cuda_block_pool.cpp); cuda/runtime/caching_allocator.cpp and cuda/runtime/pinned_allocator.cpp plug in
// the CUDA runtime. Internal to cuda/.
//
// Note [Stream-ordered reuse]
// A kernel that uses a block runs later than the host code that enqueued it, so a block freed
// on the host may still be in use on the device. A block is therefore tagged with the stream
// it was allocated on and only handed out again for that stream: work enqueued there after
// the free runs after every earlier use, so reuse needs no waiting. If other streams used the
// block too (record_stream), the free records an event on each of them, and the block returns
// to the pool only once all those events have completed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "ember/cuda/runtime/caching_allocator.h"
#include "ember/cuda/runtime/stream.h"

namespace ember::cuda {

/// What a pool needs from the hardware. Every call is made with the pool's lock held.
class MemoryBackend {
 public:
  using Event = void*;
  struct MemInfo {
    size_t free = 0;
    size_t total = 0;
  };
  virtual ~MemoryBackend() = default;
  /// `nbytes` of fresh memory, or nullptr when there is not enough (other failures throw).
  virtual void* malloc(size_t nbytes) = 0;
  virtual void free(void* ptr) = 0;
  /// Marks the point `stream` has reached; event_done says when the device has passed it.
  virtual Event record_event(CUDAStream stream) = 0;
  virtual bool event_done(Event event) = 0;
  /// Blocks the host until the event has completed.
  virtual void wait_event(Event event) = 0;
  /// The event will not be asked about again (the backend may recycle it).
  virtual void release_event(Event event) = 0;
  /// Free and total bytes of the memory this backend allocates from (cudaMemGetInfo).
  virtual MemInfo mem_info() = 0;
};

/// PyTorch's size format for memory messages: "512 bytes", "1.50 KiB", "20.00 MiB", "2.00 GiB".
std::string format_size(uint64_t nbytes);

/// "CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of ...":
/// PyTorch's message, saying ember where it says PyTorch.
std::string out_of_memory_message(int device, size_t alloc_size, MemoryBackend::MemInfo info,
                                  size_t allocated_bytes, size_t reserved_bytes);

/// The memory of one device: the core of the CUDA caching allocator.
class BlockPool {
 public:
  // PyTorch's constants, for the reasons it gives: every block is a multiple of 512 bytes;
  // requests up to 1 MiB share 2 MiB segments (so small tensors do not each cost a
  // cudaMalloc); larger ones under 10 MiB share 20 MiB segments; bigger ones get a segment of
  // their own, rounded to 2 MiB.
  static constexpr size_t kMinBlockSize = 512;
  static constexpr size_t kSmallSize = size_t{1} << 20;
  static constexpr size_t kSmallBuffer = size_t{2} << 20;
  static constexpr size_t kLargeBuffer = size_t{20} << 20;
  static constexpr size_t kMinLargeAlloc = size_t{10} << 20;
  static constexpr size_t kRoundLarge = size_t{2} << 20;

  /// The size a request is served with.
  static size_t round_size(size_t nbytes);
  /// The size of the segment obtained from the device when no cached block fits.
  static size_t segment_size(size_t rounded);

  /// `caching` false (EMBER_NO_ALLOCATOR_CACHE=1) gives each request its own exact-size
  /// segment and returns it on free, so compute-sanitizer sees every overrun and every free.
  BlockPool(MemoryBackend& backend, int device, bool caching = true);
  ~BlockPool();
  BlockPool(const BlockPool&) = delete;
  BlockPool& operator=(const BlockPool&) = delete;

  /// A block of at least `nbytes` (> 0) for use on `stream`; throws ember::Error with
  /// PyTorch's out-of-memory message when the device has no room even after the cache is
  /// given back.
  void* allocate(size_t nbytes, CUDAStream stream);
  /// Takes back a pointer allocate returned.
  void free(void* ptr);
  /// Notes that `stream` uses the block at `ptr` too, so its free waits for that stream
  /// (Note [Stream-ordered reuse]). Pointers not from this pool are ignored.
  void record_stream(void* ptr, CUDAStream stream);
  /// Gives every cached segment with nothing allocated in it back to the device.
  void empty_cache();
  MemoryStats stats() const;
  /// Peaks restart from the current values.
  void reset_peak_stats();
  int device() const { return device_; }

 private:
  struct Block;
  // Free blocks ordered by (stream, size, address): lower_bound finds the smallest block of
  // the right stream that fits (best fit), the lowest address among equals.
  struct BySize {
    bool operator()(const Block* a, const Block* b) const;
  };
  using FreeBlocks = std::set<Block*, BySize>;
  struct PendingFree {
    MemoryBackend::Event event;
    Block* block;
  };

  Block* find_free_block(FreeBlocks& pool, CUDAStream stream, size_t size);
  Block* new_segment(bool small, CUDAStream stream, size_t seg_size);
  void split(Block* block, size_t size, FreeBlocks& pool);
  void return_block(Block* block);
  void try_merge(Block* block, Block* neighbour, FreeBlocks& pool);
  void process_events();
  void wait_all_events();
  void release_cached_segments();
  void release_segment(Block* block);
  void count_allocated(Block* block);
  [[noreturn]] void throw_out_of_memory(size_t seg_size);

  MemoryBackend& backend_;
  int device_;
  bool caching_;
  mutable std::mutex mu_;
  FreeBlocks small_blocks_, large_blocks_;
  std::unordered_map<void*, Block*> allocated_;
  // Per stream, in recording order: a stream's events complete in order, so processing stops
  // at its first pending one.
  std::map<std::pair<int, uintptr_t>, std::deque<PendingFree>> pending_;
  MemoryStats stats_;
};

/// Pinned host memory: the core of the pinned (page-locked) host allocator.
class HostBlockPool {
 public:
  explicit HostBlockPool(MemoryBackend& backend, bool caching = true);
  ~HostBlockPool();
  HostBlockPool(const HostBlockPool&) = delete;
  HostBlockPool& operator=(const HostBlockPool&) = delete;

  /// At least `nbytes` (> 0) of pinned memory; blocks come in powers of two so freed ones fit
  /// later requests. Throws ember::Error when the host has no pinned memory left.
  void* allocate(size_t nbytes);
  void free(void* ptr);
  /// Whether `ptr` points into a block of this pool (allocated or cached).
  bool contains(const void* ptr) const;
  /// Notes that an asynchronous copy on `stream` reads or writes the block holding `ptr`, so
  /// the block is reused only after that stream's work enqueued so far has finished.
  /// Pointers not from this pool are ignored.
  void record_use(const void* ptr, CUDAStream stream);
  /// Returns every cached block that is free to the system.
  void empty_cache();
  size_t allocated_bytes() const;
  size_t cached_bytes() const;

 private:
  struct Block {
    Block(char* p, size_t n) : ptr(p), size(n) {}
    char* ptr;
    size_t size;
    bool allocated = false;
    int event_count = 0;
    std::vector<CUDAStream> uses;
  };
  struct PendingFree {
    MemoryBackend::Event event;
    Block* block;
  };
  Block* block_containing(const void* ptr) const;
  void process_events();

  MemoryBackend& backend_;
  bool caching_;
  mutable std::mutex mu_;
  std::map<char*, Block*> blocks_;                        // every block, by address
  std::unordered_map<size_t, std::vector<Block*>> free_;  // cached blocks by size
  std::deque<PendingFree> pending_;
  size_t allocated_bytes_ = 0, cached_bytes_ = 0;
};

}  // namespace ember::cuda
