// CUDA sort, argsort and topk: each line along `dim` (made the last, dense dim) is sorted
// with CUB, stably, as (key, position) pairs. Keys are unsigned integers whose order is the
// order wanted: IEEE floats with the sign bit folded in, -0.0 made +0.0 (they tie, as on the
// CPU) and every NaN made the largest key; signed integers with the sign bit flipped; all
// bits inverted for descending order, which keeps equal keys in position order. The values
// are then gathered from the input by position, so they keep their exact bits. topk sorts
// the whole line and keeps the first k (radix sorting costs the same for any k).
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_segmented_sort.cuh>

#include "ember/cuda/copy.h"
#include "ember/cuda/runtime/device.h"
#include "ember/cuda/loops.cuh"
#include "ember/cuda/reduce.cuh"
#include "ember/cuda/reduce.h"

namespace ember::cuda {
namespace {

/// Bits of the sort key of T: its stored width.
template <class T>
constexpr int key_bits() {
  return 8 * static_cast<int>(sizeof(device_t<T>));
}

template <class T>
__device__ __forceinline__ uint64_t sort_key(const device_t<T>* p) {
  constexpr int kBits = key_bits<T>();
  constexpr uint64_t kMask = kBits == 64 ? ~uint64_t{0} : (uint64_t{1} << kBits) - 1;
  constexpr uint64_t kSign = uint64_t{1} << (kBits - 1);
  if constexpr (std::is_same_v<T, bool> || std::is_unsigned_v<T>) {
    return static_cast<uint64_t>(*p);
  } else if constexpr (std::is_integral_v<T>) {
    return (static_cast<uint64_t>(*p) & kMask) ^ kSign;
  } else {
    opmath_t<T> v = load_opmath<T>(p);
    if (v != v) return kMask;  // NaN: above +inf
    uint64_t bits = 0;
    if constexpr (std::is_same_v<T, Half>)
      bits = __half_as_ushort(*p);
    else if constexpr (std::is_same_v<T, BFloat16>)
      bits = __bfloat16_as_ushort(*p);
    else if constexpr (std::is_same_v<T, float>)
      bits = __float_as_uint(*p);
    else
      bits = static_cast<uint64_t>(__double_as_longlong(*p));
    if (v == 0) bits = 0;  // -0.0 ties with +0.0
    return (bits & kSign) ? (~bits & kMask) : (bits | kSign);
  }
}

/// keys[i] = the key of x[i] (inverted for descending), pos[i] = i's position in its line.
template <class T>
__global__ void sort_keys_kernel(const device_t<T>* x, int64_t numel, int64_t n, bool descending,
                                 uint64_t* keys, int64_t* pos) {
  constexpr uint64_t kMask = key_bits<T>() == 64 ? ~uint64_t{0} : (uint64_t{1} << key_bits<T>()) - 1;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < numel; i += stride) {
    uint64_t k = sort_key<T>(x + i);
    keys[i] = descending ? (~k & kMask) : k;
    pos[i] = i % n;
  }
}

/// values[i] = x[the line of i, pos[i]]: the sorted values, exact.
template <class T>
__global__ void gather_sorted_kernel(const device_t<T>* x, const int64_t* pos, int64_t numel, int64_t n,
                                     device_t<T>* values) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < numel; i += stride)
    values[i] = x[i - i % n + pos[i]];
}

__global__ void line_offsets_kernel(int64_t lines, int64_t n, int64_t* offsets) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i <= lines; i += stride)
    offsets[i] = i * n;
}

/// Sorts the (key, position) pairs of `lines` dense lines of n elements, stably, reading
/// only the low `bits` bits of the keys. One long line, or a few, go through the device-wide
/// radix sort (all SMs on one line); many lines through the segmented sort (a warp or block
/// per line).
void sort_pairs(const uint64_t* keys_in, uint64_t* keys_out, const int64_t* pos_in, int64_t* pos_out,
                int64_t lines, int64_t n, int bits, Device device) {
  cudaStream_t stream = current_raw_stream();
  size_t temp_bytes = 0;
  if (lines == 1 || (n >= (int64_t{1} << 16) && lines <= 64)) {
    EMBER_CUDA_CHECK(::cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, keys_in, keys_out, pos_in,
                                                       pos_out, n, 0, bits, stream));
    Tensor temp = device_scratch(static_cast<int64_t>(temp_bytes), device);
    for (int64_t l = 0; l < lines; ++l) {
      size_t bytes = temp_bytes;
      EMBER_CUDA_CHECK(::cub::DeviceRadixSort::SortPairs(temp.data_ptr(), bytes, keys_in + l * n,
                                                         keys_out + l * n, pos_in + l * n, pos_out + l * n, n,
                                                         0, bits, stream));
    }
    return;
  }
  Tensor offsets = device_scratch((lines + 1) * static_cast<int64_t>(sizeof(int64_t)), device);
  auto* off = static_cast<int64_t*>(offsets.data_ptr());
  line_offsets_kernel<<<blocks_for(lines + 1), kThreads, 0, stream>>>(lines, n, off);
  EMBER_CUDA_CHECK_LAUNCH();
  const int64_t numel = lines * n;
  EMBER_CUDA_CHECK(::cub::DeviceSegmentedSort::StableSortPairs(nullptr, temp_bytes, keys_in, keys_out, pos_in,
                                                               pos_out, numel, lines, off, off + 1, stream));
  Tensor temp = device_scratch(static_cast<int64_t>(temp_bytes), device);
  EMBER_CUDA_CHECK(::cub::DeviceSegmentedSort::StableSortPairs(
      temp.data_ptr(), temp_bytes, keys_in, keys_out, pos_in, pos_out, numel, lines, off, off + 1, stream));
}

}  // namespace

void sort(const Tensor& x_in, const Tensor& values, const Tensor& indices, int64_t dim, bool descending) {
  EMBER_CHECK(x_in.is_cuda() && values.device() == x_in.device() && indices.device() == x_in.device(),
              "internal error: cuda::sort was called with ", x_in.device(), " and ", values.device(),
              " tensors");
  if (values.numel() == 0) return;
  DeviceGuard guard(x_in.device());
  // Lines along the last dim, dense.
  Tensor x = x_in.detach();
  const int64_t last = x.dim() == 0 ? 0 : x.dim() - 1;
  Tensor lines_t = x.dim() == 0 ? x.reshape({1}) : x.transpose(dim, last).contiguous();
  const int64_t n = lines_t.size(-1), numel = lines_t.numel(), lines = numel / n;
  const int64_t k = x.dim() == 0 ? 1 : values.size(dim);
  const Device device = x.device();
  cudaStream_t stream = current_raw_stream();

  Tensor keys = device_scratch(2 * numel * static_cast<int64_t>(sizeof(uint64_t)), device);
  Tensor pos_in = empty({numel}, TensorOptions().dtype(kLong).device(device));
  Tensor pos = empty(lines_t.sizes(), TensorOptions().dtype(kLong).device(device));
  Tensor sorted = empty(lines_t.sizes(), TensorOptions().dtype(x.dtype()).device(device));
  auto* keys_in = static_cast<uint64_t*>(keys.data_ptr());
  uint64_t* keys_out = keys_in + numel;
  auto* pos_in_p = static_cast<int64_t*>(pos_in.data_ptr());
  auto* pos_p = static_cast<int64_t*>(pos.data_ptr());

  visit_dtype(x.dtype(), [&]<typename T>() {
    const auto* xp = static_cast<const device_t<T>*>(lines_t.data_ptr());
    sort_keys_kernel<T>
        <<<blocks_for(numel), kThreads, 0, stream>>>(xp, numel, n, descending, keys_in, pos_in_p);
    EMBER_CUDA_CHECK_LAUNCH();
    sort_pairs(keys_in, keys_out, pos_in_p, pos_p, lines, n, key_bits<T>(), device);
    gather_sorted_kernel<T><<<blocks_for(numel), kThreads, 0, stream>>>(
        xp, pos_p, numel, n, static_cast<device_t<T>*>(sorted.data_ptr()));
    EMBER_CUDA_CHECK_LAUNCH();
  });

  // The first k of each line, back in x's layout.
  auto back = [&](const Tensor& t) {
    Tensor first = t.narrow(-1, 0, k);
    return x.dim() == 0 ? first.reshape({}) : first.transpose(dim, last);
  };
  ember::cuda::copy(values, back(sorted));
  ember::cuda::copy(indices, back(pos));
}

}  // namespace ember::cuda
