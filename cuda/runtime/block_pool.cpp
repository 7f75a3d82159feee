// BlockPool and HostBlockPool: the caching allocators' bookkeeping (see block_pool.h and
// Note [Stream-ordered reuse] there). Plain C++, compiled in every build; the tests exercise
// it through a fake MemoryBackend.
#include "ember/cuda/runtime/block_pool.h"

#include <algorithm>
#include <bit>
#include <iomanip>
#include <sstream>

#include "ember/core/error.h"
#include "ember/core/out_of_memory_error.h"

namespace ember::cuda {

// ---- messages ------------------------------------------------------------------------------

std::string format_size(uint64_t nbytes) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(2);
  if (nbytes <= 1024) {
    os << nbytes << " bytes";
  } else if (nbytes <= (uint64_t{1} << 20)) {
    os << static_cast<double>(nbytes) / 1024.0 << " KiB";
  } else if (nbytes <= (uint64_t{1} << 30)) {
    os << static_cast<double>(nbytes) / 1048576.0 << " MiB";
  } else {
    os << static_cast<double>(nbytes) / 1073741824.0 << " GiB";
  }
  return os.str();
}

// PyTorch adds "Including non-PyTorch memory, this process has ... in use." when NVML can tell
// (ember does not load NVML) and a hint about its allocator settings (ember has none).
std::string out_of_memory_message(int device, size_t alloc_size, MemoryBackend::MemInfo info,
                                  size_t allocated_bytes, size_t reserved_bytes) {
  return detail::str_cat(
      "CUDA out of memory. Tried to allocate ", format_size(alloc_size), ". GPU ", device,
      " has a total capacity of ", format_size(info.total), " of which ", format_size(info.free),
      " is free. Of the allocated memory ", format_size(allocated_bytes), " is allocated by ember, and ",
      format_size(reserved_bytes - allocated_bytes), " is reserved by ember but unallocated.");
}

// ---- BlockPool -------------------------------------------------------------------------------

// A piece of a segment (one cudaMalloc). The blocks of a segment form a doubly linked list in
// address order, so a freed block finds its free neighbours to merge with.
struct BlockPool::Block {
  Block(char* p, size_t n, CUDAStream s, bool sm) : ptr(p), size(n), stream(s), small(sm) {}
  char* ptr;
  size_t size;
  CUDAStream stream;  // the stream it was allocated on; reused only there
  bool small;         // in the small pool (segments of kSmallBuffer)
  bool allocated = false;
  Block* prev = nullptr;
  Block* next = nullptr;
  int event_count = 0;                  // events to wait for before it is free again
  std::vector<CUDAStream> stream_uses;  // other streams that used it (record_stream)
};

namespace {
std::pair<int, uintptr_t> stream_key(CUDAStream s) {
  return {s.device_index(), reinterpret_cast<uintptr_t>(s.stream())};
}
}  // namespace

bool BlockPool::BySize::operator()(const Block* a, const Block* b) const {
  auto ka = stream_key(a->stream), kb = stream_key(b->stream);
  if (ka != kb) return ka < kb;
  if (a->size != b->size) return a->size < b->size;
  return std::less<char*>()(a->ptr, b->ptr);
}

size_t BlockPool::round_size(size_t nbytes) {
  if (nbytes < kMinBlockSize) return kMinBlockSize;
  return (nbytes + kMinBlockSize - 1) / kMinBlockSize * kMinBlockSize;
}

size_t BlockPool::segment_size(size_t rounded) {
  if (rounded <= kSmallSize) return kSmallBuffer;
  if (rounded < kMinLargeAlloc) return kLargeBuffer;
  return (rounded + kRoundLarge - 1) / kRoundLarge * kRoundLarge;
}

BlockPool::BlockPool(MemoryBackend& backend, int device, bool caching)
    : backend_(backend), device_(device), caching_(caching) {}

BlockPool::~BlockPool() {
  // Only the bookkeeping goes: the memory belongs to the backend, which may be gone already.
  std::set<Block*> all(small_blocks_.begin(), small_blocks_.end());
  all.insert(large_blocks_.begin(), large_blocks_.end());
  for (auto& [ptr, b] : allocated_) all.insert(b);
  for (auto& [key, queue] : pending_)
    for (PendingFree& p : queue) all.insert(p.block);
  for (Block* b : all) delete b;
}

void* BlockPool::allocate(size_t nbytes, CUDAStream stream) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!caching_) {
    Block* block = new_segment(false, stream, nbytes);
    if (!block) {
      ++stats_.num_ooms;
      throw_out_of_memory(nbytes);
    }
    block->allocated = true;
    allocated_[block->ptr] = block;
    count_allocated(block);
    return block->ptr;
  }

  process_events();
  size_t size = round_size(nbytes);
  bool small = size <= kSmallSize;
  FreeBlocks& pool = small ? small_blocks_ : large_blocks_;
  Block* block = find_free_block(pool, stream, size);
  if (!block) {
    size_t seg = segment_size(size);
    block = new_segment(small, stream, seg);
    if (!block) {
      // The device is full: give back what the cache holds (after the blocks still waiting
      // on other streams come home) and try once more, as PyTorch does.
      ++stats_.num_alloc_retries;
      release_cached_segments();
      block = find_free_block(pool, stream, size);
      if (!block) block = new_segment(small, stream, seg);
      if (!block) {
        ++stats_.num_ooms;
        throw_out_of_memory(seg);
      }
    }
  }
  // Keep the rest of a bigger block for later requests. A large block is split only when
  // more than 1 MiB would be left, so large pools do not fill with slivers.
  size_t remaining = block->size - size;
  if (small ? remaining >= kMinBlockSize : remaining > kSmallSize) split(block, size, pool);
  block->allocated = true;
  allocated_[block->ptr] = block;
  count_allocated(block);
  return block->ptr;
}

void BlockPool::free(void* ptr) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = allocated_.find(ptr);
  EMBER_CHECK(it != allocated_.end(), "invalid device pointer: ", ptr);
  Block* block = it->second;
  allocated_.erase(it);
  block->allocated = false;
  stats_.allocated_bytes -= block->size;
  --stats_.active_blocks;
  if (!caching_) {
    // cudaFree waits for the whole device, so no stream can still be using the block.
    release_segment(block);
    return;
  }
  if (!block->stream_uses.empty()) {
    for (CUDAStream s : block->stream_uses) {
      pending_[stream_key(s)].push_back(PendingFree{backend_.record_event(s), block});
      ++block->event_count;
    }
    block->stream_uses.clear();
    return;
  }
  return_block(block);
}

void BlockPool::record_stream(void* ptr, CUDAStream stream) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = allocated_.find(ptr);
  if (it == allocated_.end()) return;
  Block* block = it->second;
  if (stream == block->stream) return;  // ordered on its own stream already
  if (std::find(block->stream_uses.begin(), block->stream_uses.end(), stream) == block->stream_uses.end())
    block->stream_uses.push_back(stream);
}

void BlockPool::empty_cache() {
  std::lock_guard<std::mutex> lock(mu_);
  release_cached_segments();
}

MemoryStats BlockPool::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

void BlockPool::reset_peak_stats() {
  std::lock_guard<std::mutex> lock(mu_);
  stats_.max_allocated_bytes = stats_.allocated_bytes;
  stats_.max_reserved_bytes = stats_.reserved_bytes;
}

// The smallest free block of `stream` that holds `size`, taken out of the pool.
BlockPool::Block* BlockPool::find_free_block(FreeBlocks& pool, CUDAStream stream, size_t size) {
  Block key(nullptr, size, stream, false);
  auto it = pool.lower_bound(&key);
  if (it == pool.end() || (*it)->stream != stream) return nullptr;
  Block* block = *it;
  pool.erase(it);
  return block;
}

BlockPool::Block* BlockPool::new_segment(bool small, CUDAStream stream, size_t seg_size) {
  void* p = backend_.malloc(seg_size);
  if (!p) return nullptr;
  ++stats_.num_device_alloc;
  ++stats_.segments;
  stats_.reserved_bytes += seg_size;
  stats_.max_reserved_bytes = std::max(stats_.max_reserved_bytes, stats_.reserved_bytes);
  return new Block(static_cast<char*>(p), seg_size, stream, small);
}

// `block` keeps its first `size` bytes; the rest becomes a free block right after it.
void BlockPool::split(Block* block, size_t size, FreeBlocks& pool) {
  Block* rest = new Block(block->ptr + size, block->size - size, block->stream, block->small);
  rest->prev = block;
  rest->next = block->next;
  if (rest->next) rest->next->prev = rest;
  block->next = rest;
  block->size = size;
  pool.insert(rest);
}

// A block nobody uses any more: merged with free neighbours and put back in its pool.
void BlockPool::return_block(Block* block) {
  FreeBlocks& pool = block->small ? small_blocks_ : large_blocks_;
  try_merge(block, block->prev, pool);
  try_merge(block, block->next, pool);
  pool.insert(block);
}

void BlockPool::try_merge(Block* block, Block* neighbour, FreeBlocks& pool) {
  // A neighbour still waiting on events is free on the host but maybe not on the device.
  if (!neighbour || neighbour->allocated || neighbour->event_count > 0) return;
  pool.erase(neighbour);
  if (neighbour == block->prev) {
    block->ptr = neighbour->ptr;
    block->prev = neighbour->prev;
    if (block->prev) block->prev->next = block;
  } else {
    block->next = neighbour->next;
    if (block->next) block->next->prev = block;
  }
  block->size += neighbour->size;
  delete neighbour;
}

// Blocks whose streams have passed their events go back to the pools.
void BlockPool::process_events() {
  for (auto it = pending_.begin(); it != pending_.end();) {
    std::deque<PendingFree>& queue = it->second;
    while (!queue.empty() && backend_.event_done(queue.front().event)) {
      PendingFree done = queue.front();
      queue.pop_front();
      backend_.release_event(done.event);
      if (--done.block->event_count == 0) return_block(done.block);
    }
    it = queue.empty() ? pending_.erase(it) : std::next(it);
  }
}

void BlockPool::wait_all_events() {
  for (auto& [key, queue] : pending_) {
    for (PendingFree& p : queue) {
      backend_.wait_event(p.event);
      backend_.release_event(p.event);
      if (--p.block->event_count == 0) return_block(p.block);
    }
  }
  pending_.clear();
}

// Segments with nothing allocated in them (one free, unsplit block) go back to the device.
void BlockPool::release_cached_segments() {
  wait_all_events();
  for (FreeBlocks* pool : {&small_blocks_, &large_blocks_}) {
    for (auto it = pool->begin(); it != pool->end();) {
      Block* block = *it;
      if (block->prev || block->next) {
        ++it;
        continue;
      }
      it = pool->erase(it);
      release_segment(block);
    }
  }
}

void BlockPool::release_segment(Block* block) {
  backend_.free(block->ptr);
  ++stats_.num_device_free;
  --stats_.segments;
  stats_.reserved_bytes -= block->size;
  delete block;
}

void BlockPool::count_allocated(Block* block) {
  stats_.allocated_bytes += block->size;
  stats_.max_allocated_bytes = std::max(stats_.max_allocated_bytes, stats_.allocated_bytes);
  ++stats_.active_blocks;
}

void BlockPool::throw_out_of_memory(size_t seg_size) {
  // Its own type, as PyTorch's, so that callers can tell it from other errors and retry.
  throw OutOfMemoryError(out_of_memory_message(device_, seg_size, backend_.mem_info(), stats_.allocated_bytes,
                                               stats_.reserved_bytes));
}

// ---- HostBlockPool ---------------------------------------------------------------------------

HostBlockPool::HostBlockPool(MemoryBackend& backend, bool caching) : backend_(backend), caching_(caching) {}

HostBlockPool::~HostBlockPool() {
  for (auto& [ptr, b] : blocks_) delete b;
}

void* HostBlockPool::allocate(size_t nbytes) {
  std::lock_guard<std::mutex> lock(mu_);
  process_events();
  // Powers of two, as PyTorch's host allocator: a cached block then fits any later request
  // of the same order of magnitude.
  size_t size = caching_ ? std::bit_ceil(std::max<size_t>(nbytes, 1)) : nbytes;
  std::vector<Block*>& cached = free_[size];
  Block* block = nullptr;
  if (!cached.empty()) {
    block = cached.back();
    cached.pop_back();
    cached_bytes_ -= size;
  } else {
    void* p = backend_.malloc(size);
    if (!p) {
      // Pinned memory is locked out of the OS's reach: give back what the cache holds first.
      for (PendingFree& pf : pending_) backend_.wait_event(pf.event);
      process_events();
      for (auto& [sz, list] : free_) {
        for (Block* b : list) {
          backend_.free(b->ptr);
          blocks_.erase(b->ptr);
          delete b;
        }
        list.clear();
      }
      cached_bytes_ = 0;
      p = backend_.malloc(size);
    }
    EMBER_CHECK(p, "CUDA error: out of memory (tried to allocate ", format_size(size),
                " of pinned host memory)");
    block = new Block(static_cast<char*>(p), size);
    blocks_[block->ptr] = block;
  }
  block->allocated = true;
  allocated_bytes_ += size;
  return block->ptr;
}

void HostBlockPool::free(void* ptr) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = blocks_.find(static_cast<char*>(ptr));
  EMBER_CHECK(it != blocks_.end() && it->second->allocated, "invalid pinned memory pointer: ", ptr);
  Block* block = it->second;
  block->allocated = false;
  allocated_bytes_ -= block->size;
  if (!caching_) {
    // Returned at once: first wait for the copies that may still read or write it.
    for (CUDAStream s : block->uses) {
      MemoryBackend::Event e = backend_.record_event(s);
      backend_.wait_event(e);
      backend_.release_event(e);
    }
    backend_.free(block->ptr);
    blocks_.erase(it);
    delete block;
    return;
  }
  if (!block->uses.empty()) {
    for (CUDAStream s : block->uses) {
      pending_.push_back(PendingFree{backend_.record_event(s), block});
      ++block->event_count;
    }
    block->uses.clear();
    return;
  }
  free_[block->size].push_back(block);
  cached_bytes_ += block->size;
}

bool HostBlockPool::contains(const void* ptr) const {
  std::lock_guard<std::mutex> lock(mu_);
  return block_containing(ptr) != nullptr;
}

void HostBlockPool::record_use(const void* ptr, CUDAStream stream) {
  std::lock_guard<std::mutex> lock(mu_);
  Block* block = block_containing(ptr);
  if (!block || !block->allocated) return;
  if (std::find(block->uses.begin(), block->uses.end(), stream) == block->uses.end())
    block->uses.push_back(stream);
}

void HostBlockPool::empty_cache() {
  std::lock_guard<std::mutex> lock(mu_);
  process_events();
  for (auto& [size, list] : free_) {
    for (Block* b : list) {
      backend_.free(b->ptr);
      blocks_.erase(b->ptr);
      delete b;
    }
  }
  free_.clear();
  cached_bytes_ = 0;
}

size_t HostBlockPool::allocated_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return allocated_bytes_;
}

size_t HostBlockPool::cached_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return cached_bytes_;
}

HostBlockPool::Block* HostBlockPool::block_containing(const void* ptr) const {
  auto it = blocks_.upper_bound(const_cast<char*>(static_cast<const char*>(ptr)));
  if (it == blocks_.begin()) return nullptr;
  --it;
  Block* b = it->second;
  return static_cast<const char*>(ptr) < b->ptr + b->size ? b : nullptr;
}

// Blocks whose copies have all finished join the cache.
void HostBlockPool::process_events() {
  for (auto it = pending_.begin(); it != pending_.end();) {
    if (!backend_.event_done(it->event)) {
      ++it;
      continue;
    }
    backend_.release_event(it->event);
    Block* block = it->block;
    it = pending_.erase(it);
    if (--block->event_count == 0) {
      free_[block->size].push_back(block);
      cached_bytes_ += block->size;
    }
  }
}

}  // namespace ember::cuda
