// fuzz_ops: decodes the input into tensors (shapes up to 4-D, sizes 0..4, every dtype) and a
// chain of ops from several families — unary, binary with broadcasting, reductions, views
// (transpose, permute, expand, slice, select, as_strided, ...), index ops and matmul — and
// checks each result against plain reference loops (op_reference.h), reading ember's memory
// through the result's own sizes and strides. An ember::Error is an acceptable answer to any
// input; a crash, a sanitizer report, a wrong shape, dtype or value is a finding (abort).
#include <fuzzer/FuzzedDataProvider.h>

#include "op_reference.h"

namespace {

using namespace ember;
using namespace ember_fuzz;

// ---- the decoder and the ops -------------------------------------------------------------

class Fuzzer {
 public:
  explicit Fuzzer(const uint8_t* data, size_t size) : in_(data, size) {}

  void run() {
    int tensors = in_.ConsumeIntegralInRange(1, 3);
    for (int i = 0; i < tensors; ++i) pool_.push_back(fresh(pick_dtype()));
    int ops = in_.ConsumeIntegralInRange(1, kMaxOps);
    for (int i = 0; i < ops && in_.remaining_bytes() > 0; ++i) {
      try {
        step();
      } catch (const Error&) {
        // Rejected input: acceptable. The op's operands stay as they were.
      }
    }
  }

 private:
  ScalarType pick_dtype() { return kTypes[in_.ConsumeIntegralInRange<size_t>(0, std::size(kTypes) - 1)]; }

  Shape pick_shape() {
    Shape s(in_.ConsumeIntegralInRange(0, kMaxRank));
    for (int64_t& d : s) d = in_.ConsumeIntegralInRange(0, kMaxSize);
    return s;
  }

  double pick_value(ScalarType t) {
    static constexpr double kFloats[] = {0,    1,    -1, 0.5, -2.5, 3,        1e-3,      100,
                                         7.25, -0.0, -9, 0.1, NAN,  INFINITY, -INFINITY, 2};
    if (t == kBool) return in_.ConsumeBool();
    if (t == kByte) return in_.ConsumeIntegralInRange(0, 16);
    if (is_int(t)) return in_.ConsumeIntegralInRange(-8, 8);
    return kFloats[in_.ConsumeIntegralInRange<size_t>(0, std::size(kFloats) - 1)];
  }

  /// A contiguous tensor of dtype t from the input (of shape *want when given); the view ops
  /// below make the strided ones.
  Tensor fresh(ScalarType t, const Shape* want = nullptr) {
    Vals x{want ? *want : pick_shape(), {}, t};
    x.v.resize(static_cast<size_t>(numel_of(x.shape)));
    for (double& v : x.v) v = pick_value(t);
    return make(x);
  }

  Tensor& pick() { return pool_[in_.ConsumeIntegralInRange<size_t>(0, pool_.size() - 1)]; }

  void keep(const Tensor& t) {
    // Bounded sizes keep each input fast (chains of expand would otherwise grow the rank).
    if (t.numel() > kMaxNumel || t.dim() > kMaxKeptRank) return;
    if (pool_.size() < kPool)
      pool_.push_back(t);
    else
      pool_[in_.ConsumeIntegralInRange<size_t>(0, pool_.size() - 1)] = t;
  }

  int64_t any_dim(const Tensor& t) { return in_.ConsumeIntegralInRange<int64_t>(-t.dim() - 1, t.dim()); }

  void step() {
    g_operands.clear();
    switch (in_.ConsumeIntegralInRange(0, 16)) {
      case 0:
        return unary();
      case 1:
      case 2:
        return binary();
      case 3:
        return reduce();
      case 4:
        return transpose();
      case 5:
        return permute();
      case 6:
        return expand();
      case 7:
        return slice();
      case 8:
        return select();
      case 9:
        return as_strided();
      case 10:
        return reshape();
      case 11:
        return index_select();
      case 12:
        return gather();
      case 13:
        return matmul();
      case 14:
        return cast();
      case 15:
        return masked_fill();
      default:
        return keep(fresh(pick_dtype()));
    }
  }

  // -- unary: result dtype is the input's (neg, abs, relu) or float for integers (the rest)
  void unary() {
    const Tensor& x = pick();
    Vals a = read(x);
    int which = in_.ConsumeIntegralInRange(0, 6);
    static const char* kNames[] = {"neg", "abs", "relu", "exp", "sigmoid", "sqrt", "tanh"};
    bool keeps_dtype = which <= 2;
    if (a.dtype == kBool && keeps_dtype) return;  // PyTorch rejects neg on bool; no value to check
    Vals want{a.shape, a.v, keeps_dtype ? a.dtype : (is_float(a.dtype) ? a.dtype : kFloat)};
    for (double& v : want.v) {
      switch (which) {
        case 0:
          v = -v;
          break;
        case 1:
          v = std::fabs(v);
          break;
        case 2:
          v = std::isnan(v) ? v : std::max(v, 0.0);
          break;
        case 3:
          v = std::exp(v);
          break;
        case 4:
          v = 1 / (1 + std::exp(-v));
          break;
        case 5:
          v = std::sqrt(v);
          break;
        default:
          v = std::tanh(v);
          break;
      }
    }
    if (!representable(want)) return;
    Tensor out;
    switch (which) {
      case 0:
        out = x.neg();
        break;
      case 1:
        out = x.abs();
        break;
      case 2:
        out = x.relu();
        break;
      case 3:
        out = x.exp();
        break;
      case 4:
        out = x.sigmoid();
        break;
      case 5:
        out = x.sqrt();
        break;
      default:
        out = x.tanh();
        break;
    }
    check(kNames[which], out, want, {},
          keeps_dtype ? 0 : 8);  // exp and tanh may be vectorized approximations
    keep(out);
  }

  // -- binary with broadcasting and type promotion
  void binary() {
    const Tensor x = pick(), y = in_.ConsumeBool() ? pick() : fresh(pick_dtype());
    Vals a = read(x), b = read(y);
    int which = in_.ConsumeIntegralInRange(0, 4);
    static const char* kNames[] = {"add", "sub", "mul", "div", "maximum"};
    Shape shape;
    auto run = [&] {
      switch (which) {
        case 0:
          return x + y;
        case 1:
          return x - y;
        case 2:
          return x * y;
        case 3:
          return x / y;
        default:
          return x.maximum(y);
      }
    };
    if (!broadcast(a.shape, b.shape, shape)) return expect_error(kNames[which], run);
    ScalarType dt = result_type(a, b);
    if (which == 3 && !is_float(dt)) dt = kFloat;  // true division
    if (which == 1 && dt == kBool) return;         // PyTorch rejects bool subtraction
    Vals want{shape, {}, dt};
    for_each_index(shape, [&](int64_t, const Shape& idx) {
      double p = to_dtype(a.v[broadcast_index(a.shape, idx)], dt),
             q = to_dtype(b.v[broadcast_index(b.shape, idx)], dt);
      double r = which == 0                         ? p + q
                 : which == 1                       ? p - q
                 : which == 2                       ? p * q
                 : which == 3                       ? p / q
                 : (std::isnan(p) || std::isnan(q)) ? NAN
                                                    : std::max(p, q);
      want.v.push_back(r);
    });
    if (!representable(want)) return;
    // One rounding of each operand into the result's dtype, one of the result.
    std::vector<double> mag(want.v.size());
    for_each_index(shape, [&](int64_t i, const Shape& idx) {
      double p = std::fabs(a.v[broadcast_index(a.shape, idx)]),
             q = std::fabs(b.v[broadcast_index(b.shape, idx)]);
      mag[i] = which == 2 || which == 3 ? std::fabs(want.v[i]) : std::max(p, q);
    });
    Tensor out = run();
    check(kNames[which], out, want, mag, 3);
    keep(out);
  }

  // -- reductions over a list of dims (sum, mean, amax), with keepdim
  void reduce() {
    const Tensor& x = pick();
    Vals a = read(x);
    int64_t rank = static_cast<int64_t>(a.shape.size());
    Shape dims(in_.ConsumeIntegralInRange(0, 2));
    for (int64_t& d : dims) d = any_dim(x);
    bool keepdim = in_.ConsumeBool();
    int which = in_.ConsumeIntegralInRange(0, 2);
    static const char* kNames[] = {"sum", "mean", "amax"};
    auto run = [&] {
      return which == 0 ? x.sum(dims, keepdim) : which == 1 ? x.mean(dims, keepdim) : x.amax(dims, keepdim);
    };
    std::vector<bool> reduced(static_cast<size_t>(rank), dims.empty());
    for (int64_t d : dims) {
      if (!wrap_dim(d, rank)) return expect_error(kNames[which], run);
      if (rank == 0) continue;
      if (reduced[d] && !dims.empty()) return expect_error(kNames[which], run);  // a dim given twice
      reduced[d] = true;
    }
    if (which == 1 && !is_float(a.dtype)) return expect_error("mean of an integer tensor", run);
    Shape out_shape, kept;
    for (int64_t d = 0; d < rank; ++d) {
      if (!reduced[d]) out_shape.push_back(a.shape[d]);
      kept.push_back(reduced[d] ? 1 : a.shape[d]);
    }
    int64_t count = 1;
    for (int64_t d = 0; d < rank; ++d)
      if (reduced[d]) count *= a.shape[d];
    if (which == 2 && count == 0 && numel_of(kept) != 0 && rank > 0)
      return expect_error("amax over an empty dim", run);
    if (which == 2 && a.v.empty() && rank == 0) return;
    ScalarType dt = which == 0 && !is_float(a.dtype) ? kLong : a.dtype;
    Vals want{keepdim ? kept : out_shape,
              std::vector<double>(static_cast<size_t>(numel_of(kept)), which == 2 ? -INFINITY : 0.0), dt};
    std::vector<double> mag(want.v.size(), 0.0);
    for_each_index(a.shape, [&](int64_t i, const Shape& idx) {
      Shape o = idx;
      for (int64_t d = 0; d < rank; ++d)
        if (reduced[d]) o[d] = 0;
      int64_t f = flat_of(kept, o);
      double v = a.v[i];
      if (which == 2)
        want.v[f] = (std::isnan(v) || std::isnan(want.v[f])) ? NAN : std::max(want.v[f], v);
      else
        want.v[f] += v;
      mag[f] += std::fabs(v);
    });
    if (which == 1)
      for (size_t i = 0; i < want.v.size(); ++i)
        want.v[i] /= static_cast<double>(count), mag[i] /= static_cast<double>(count);
    if (which == 2 && count == 0) return;  // amax of a 0-dim empty: nothing to check
    if (!representable(want)) return;
    // A float sum may round at every addition (ember's order is not the reference's).
    Tensor out = run();
    check(kNames[which], out, want, mag, static_cast<double>(count) + 2);
    keep(out);
  }

  /// A view op: checks `out` against the reference `want`, then keeps it.
  void view_result(const char* op, const Tensor& out, const Vals& want) {
    check(op, out, want);
    keep(out);
  }

  void transpose() {
    const Tensor& x = pick();
    int64_t d0 = any_dim(x), d1 = any_dim(x), rank = x.dim();
    int64_t w0 = d0, w1 = d1;
    if (!wrap_dim(w0, rank) || !wrap_dim(w1, rank))
      return expect_error("transpose", [&] { x.transpose(d0, d1); });
    Vals a = read(x);
    if (rank == 0) return view_result("transpose", x.transpose(d0, d1), a);
    Shape shape = a.shape;
    std::swap(shape[w0], shape[w1]);
    Vals want{shape, {}, a.dtype};
    for_each_index(shape, [&](int64_t, const Shape& idx) {
      Shape src = idx;
      std::swap(src[w0], src[w1]);
      want.v.push_back(a.v[flat_of(a.shape, src)]);
    });
    view_result("transpose", x.transpose(d0, d1), want);
  }

  void permute() {
    const Tensor& x = pick();
    Vals a = read(x);
    int64_t rank = x.dim();
    Shape perm(static_cast<size_t>(rank));
    for (int64_t i = 0; i < rank; ++i) perm[i] = i;
    for (int64_t i = rank - 1; i > 0; --i)
      std::swap(perm[i], perm[in_.ConsumeIntegralInRange<int64_t>(0, i)]);
    if (rank > 0 && in_.ConsumeIntegralInRange(0, 7) == 0) {  // sometimes an invalid permutation
      perm[0] = perm[rank - 1] == perm[0] ? rank : perm[rank - 1];
      if (rank == 1) perm[0] = 1;
      return expect_error("permute", [&] { x.permute(perm); });
    }
    Shape shape;
    for (int64_t p : perm) shape.push_back(a.shape[p]);
    Vals want{shape, {}, a.dtype};
    for_each_index(shape, [&](int64_t, const Shape& idx) {
      Shape src(static_cast<size_t>(rank));
      for (int64_t d = 0; d < rank; ++d) src[perm[d]] = idx[d];
      want.v.push_back(a.v[flat_of(a.shape, src)]);
    });
    view_result("permute", x.permute(perm), want);
  }

  void expand() {
    const Tensor& x = pick();
    Vals a = read(x);
    int64_t lead = in_.ConsumeIntegralInRange(0, 2), rank = x.dim();
    Shape size(static_cast<size_t>(lead + rank));
    bool valid = true;
    for (int64_t i = 0; i < lead + rank; ++i) {
      int64_t src = i < lead ? 1 : a.shape[i - lead];
      int64_t choice = in_.ConsumeIntegralInRange(-1, kMaxSize);
      if (i >= lead && choice == -1) {
        size[i] = -1;  // keep this size
        continue;
      }
      if (choice < 0) valid = false;  // -1 for a new leading dim is an error
      if (src != 1 && choice != src) valid = false;
      size[i] = choice;
    }
    if (!valid) return expect_error("expand", [&] { x.expand(size); });
    Shape shape = size;
    for (int64_t i = lead; i < lead + rank; ++i)
      if (shape[i] == -1) shape[i] = a.shape[i - lead];
    if (numel_of(shape) > kMaxNumel) return;
    Vals want{shape, {}, a.dtype};
    for_each_index(shape,
                   [&](int64_t, const Shape& idx) { want.v.push_back(a.v[broadcast_index(a.shape, idx)]); });
    view_result("expand", x.expand(size), want);
  }

  void slice() {
    const Tensor& x = pick();
    int64_t dim = any_dim(x), rank = x.dim();
    int64_t start = in_.ConsumeIntegralInRange(-6, 6), end = in_.ConsumeIntegralInRange(-6, 6);
    int64_t step = in_.ConsumeIntegralInRange(0, 3);
    int64_t wd = dim;
    if (rank == 0 || !wrap_dim(wd, rank) || step <= 0)
      return expect_error("slice", [&] { x.slice(dim, start, end, step); });
    Vals a = read(x);
    int64_t n = a.shape[wd];
    auto clamp = [n](int64_t i) { return std::clamp<int64_t>(i < 0 ? i + n : i, 0, n); };
    int64_t s = clamp(start), e = std::max(clamp(end), clamp(start));
    Shape shape = a.shape;
    shape[wd] = (e - s + step - 1) / step;
    Vals want{shape, {}, a.dtype};
    for_each_index(shape, [&](int64_t, const Shape& idx) {
      Shape src = idx;
      src[wd] = s + idx[wd] * step;
      want.v.push_back(a.v[flat_of(a.shape, src)]);
    });
    view_result("slice", x.slice(dim, start, end, step), want);
  }

  void select() {
    const Tensor& x = pick();
    int64_t dim = any_dim(x), rank = x.dim(), index = in_.ConsumeIntegralInRange(-5, 5);
    int64_t wd = dim;
    if (rank == 0 || !wrap_dim(wd, rank) || index < -x.size(wd) || index >= x.size(wd))
      return expect_error("select", [&] { x.select(dim, index); });
    Vals a = read(x);
    int64_t i = index < 0 ? index + a.shape[wd] : index;
    Shape shape = a.shape;
    shape.erase(shape.begin() + wd);
    Vals want{shape, {}, a.dtype};
    for_each_index(shape, [&](int64_t, const Shape& idx) {
      Shape src = idx;
      src.insert(src.begin() + wd, i);
      want.v.push_back(a.v[flat_of(a.shape, src)]);
    });
    view_result("select", x.select(dim, index), want);
  }

  // as_strided on a contiguous copy: the reference reads the storage directly.
  void as_strided() {
    Tensor base = pick().contiguous().clone();  // offset 0, storage exactly numel elements
    Vals a = read(base);
    int rank = in_.ConsumeIntegralInRange(0, kMaxRank);
    Shape size(rank), stride(rank);
    for (int i = 0; i < rank; ++i) {
      size[i] = in_.ConsumeIntegralInRange(0, kMaxSize);
      // Now and then a stride whose extent overflows int64.
      stride[i] = in_.ConsumeIntegralInRange(0, 15) == 0 ? std::numeric_limits<int64_t>::max() / 2
                                                         : in_.ConsumeIntegralInRange(-1, 5);
    }
    int64_t offset = in_.ConsumeIntegralInRange(-2, 6);
    bool empty_view = numel_of(size) == 0;
    __int128 last = offset;  // the largest storage index the view reaches (exact)
    bool negative = false;
    for (int i = 0; i < rank; ++i) {
      negative |= stride[i] < 0;
      if (size[i] > 0) last += static_cast<__int128>(size[i] - 1) * std::max<int64_t>(stride[i], 0);
    }
    auto run = [&] { return base.as_strided(size, stride, offset); };
    if (negative || offset < 0) return expect_error("as_strided with a negative stride or offset", run);
    // The storage must hold the last element (an empty view needs only its offset).
    if (empty_view) {  // PyTorch checks no bounds for a view of no elements
      Tensor out = run();
      if (out.sizes().vec() != size) finding("as_strided: wrong shape of an empty view");
      return;
    }
    if (last >= static_cast<__int128>(a.v.size())) return expect_error("as_strided out of bounds", run);
    Vals want{size, {}, a.dtype};
    for_each_index(size, [&](int64_t, const Shape& idx) {
      int64_t at = offset;
      for (int i = 0; i < rank; ++i) at += idx[i] * stride[i];
      want.v.push_back(a.v[at]);
    });
    view_result("as_strided", run(), want);
  }

  void reshape() {
    const Tensor& x = pick();
    Vals a = read(x);
    Shape size = pick_shape();
    bool infer = !size.empty() && in_.ConsumeBool();
    int64_t known = 1;
    for (size_t i = 1; i < size.size(); ++i) known *= size[i];
    if (infer) size[0] = -1;
    Shape shape = size;
    if (infer && known != 0 && static_cast<int64_t>(a.v.size()) % known == 0)
      shape[0] = static_cast<int64_t>(a.v.size()) / known;
    auto run = [&] { return in_.ConsumeBool() ? x.reshape(size) : x.contiguous().view(size); };
    if (numel_of(shape) != static_cast<int64_t>(a.v.size()) || (!shape.empty() && shape[0] < 0) ||
        (infer && known == 0))
      return expect_error("reshape", run);
    view_result("reshape", run(), Vals{shape, a.v, a.dtype});
  }

  void index_select() {
    const Tensor& x = pick();
    int64_t dim = any_dim(x), rank = x.dim(), wd = dim;
    Shape ishape{in_.ConsumeIntegralInRange(0, 5)};
    Vals ix{ishape, {}, kLong};
    int64_t n = rank == 0 ? 1 : (wrap_dim(wd, rank) ? x.size(wd) : 0);
    bool in_range = true;
    for (int64_t i = 0; i < ishape[0]; ++i) {
      ix.v.push_back(in_.ConsumeIntegralInRange<int64_t>(-1, n));
      in_range &= ix.v.back() >= 0 && ix.v.back() < n;
    }
    Tensor index = make(ix);
    auto run = [&] { return x.index_select(dim, index); };
    if (!wrap_dim(wd, rank)) return expect_error("index_select dim", run);
    if (!in_range) {
      // Past the end must be refused; a negative index PyTorch refuses too, ember may wrap it.
      for (double v : ix.v)
        if (v >= n) return expect_error("index_select index out of range", run);
      try {
        run();
      } catch (const Error&) {
      }
      return;
    }
    if (rank == 0) {  // a 0-dim self: only "no crash" is checked
      try {
        run();
      } catch (const Error&) {
      }
      return;
    }
    Vals a = read(x);
    Shape shape = a.shape;
    shape[wd] = ishape[0];
    Vals want{shape, {}, a.dtype};
    for_each_index(shape, [&](int64_t, const Shape& idx) {
      Shape src = idx;
      src[wd] = static_cast<int64_t>(ix.v[idx[wd]]);
      want.v.push_back(a.v[flat_of(a.shape, src)]);
    });
    view_result("index_select", run(), want);
  }

  void gather() {
    const Tensor& x = pick();
    int64_t rank = x.dim(), dim = any_dim(x), wd = dim;
    if (rank == 0 || !wrap_dim(wd, rank)) return;  // (0-dim gather: a corner not checked here)
    Vals a = read(x);
    Shape ishape = a.shape;
    bool valid = true;
    for (int64_t d = 0; d < rank; ++d) {
      ishape[d] = in_.ConsumeIntegralInRange<int64_t>(0, kMaxSize);
      if (d != wd && ishape[d] > a.shape[d]) valid = false;
    }
    Vals ix{ishape, {}, kLong};
    bool in_range = true;
    for (int64_t i = 0; i < numel_of(ishape); ++i) {
      ix.v.push_back(in_.ConsumeIntegralInRange<int64_t>(0, a.shape[wd]));
      in_range &= ix.v.back() < a.shape[wd];
    }
    Tensor index = make(ix);
    auto run = [&] { return x.gather(dim, index); };
    if (numel_of(ishape) == 0) {  // nothing gathered: only the shape rule can fail
      try {
        run();
      } catch (const Error&) {
      }
      return;
    }
    if (!valid || !in_range) return expect_error("gather", run);
    Vals want{ishape, {}, a.dtype};
    for_each_index(ishape, [&](int64_t i, const Shape& idx) {
      Shape src = idx;
      src[wd] = static_cast<int64_t>(ix.v[i]);
      want.v.push_back(a.v[flat_of(a.shape, src)]);
    });
    view_result("gather", run(), want);
  }

  // matmul with torch.matmul's rules: 1-D operands get a dim added and removed, batch dims
  // broadcast. The second operand is made to fit (or, sometimes, not).
  void matmul() {
    const Tensor& x = pick();
    if (x.dim() == 0) return expect_error("matmul of a 0-dim tensor", [&] { x.matmul(x); });
    Vals a = read(x);
    int64_t k = a.shape.back();
    Shape bshape;
    int brank = in_.ConsumeIntegralInRange(1, 3);
    if (brank == 3)  // a batch dim: a's own (broadcasts) or any size (may not)
      bshape.push_back(a.shape.size() > 2 && in_.ConsumeBool()
                           ? a.shape[a.shape.size() - 3]
                           : in_.ConsumeIntegralInRange<int64_t>(0, kMaxSize));
    bshape.push_back(in_.ConsumeIntegralInRange(0, 7) == 0 ? k + 1 : k);  // sometimes mismatched
    if (brank >= 2) bshape.push_back(in_.ConsumeIntegralInRange(0, kMaxSize));
    Tensor y = fresh(x.dtype(), &bshape);
    Vals b = read(y);
    auto run = [&] { return x.matmul(y); };
    if (b.shape[b.shape.size() == 1 ? 0 : b.shape.size() - 2] != k) return expect_error("matmul shapes", run);
    if (a.dtype == kBool) {  // not a matmul dtype in PyTorch: only "no crash" is checked
      try {
        run();
      } catch (const Error&) {
      }
      return;
    }
    // As 3-D: a (batch.., n, k), b (batch.., k, m).
    Shape as = a.shape, bs = b.shape;
    bool a1 = as.size() == 1, b1 = bs.size() == 1;
    if (a1) as.insert(as.begin(), 1);
    if (b1) bs.push_back(1);
    Shape abatch(as.begin(), as.end() - 2), bbatch(bs.begin(), bs.end() - 2), batch;
    if (!broadcast(abatch, bbatch, batch)) return expect_error("matmul batch", run);
    int64_t n = as[as.size() - 2], m = bs.back();
    Shape full = batch;
    full.push_back(n);
    full.push_back(m);
    Vals want{{}, {}, a.dtype};
    std::vector<double> mag;
    for_each_index(full, [&](int64_t, const Shape& idx) {
      Shape bi(idx.begin(), idx.end() - 2);
      double s = 0, s_abs = 0;
      for (int64_t j = 0; j < k; ++j) {
        Shape ai = bi, bj = bi;
        ai.push_back(idx[idx.size() - 2]), ai.push_back(j);
        bj.push_back(j), bj.push_back(idx.back());
        Shape afull = abatch, bfull = bbatch;
        afull.push_back(n), afull.push_back(k), bfull.push_back(k), bfull.push_back(m);
        double p = a.v[broadcast_index(afull, ai)], q = b.v[broadcast_index(bfull, bj)];
        s += p * q;
        s_abs += std::fabs(p * q);
      }
      want.v.push_back(s);
      mag.push_back(s_abs);
    });
    want.shape = batch;
    if (!a1) want.shape.push_back(n);
    if (!b1) want.shape.push_back(m);
    if (!representable(want)) return;
    Tensor out = run();
    check("matmul", out, want, mag, static_cast<double>(k) + 2);
    keep(out);
  }

  // to(dtype): C++ leaves NaN, infinities and out-of-range floats converted to integers
  // undefined, so those are not asked for.
  void cast() {
    const Tensor& x = pick();
    ScalarType to = pick_dtype();
    Vals a = read(x);
    Vals want{a.shape, a.v, to};
    for (double& v : want.v) {
      if (to == kBool) {
        v = v != 0;
      } else if (!is_float(to)) {
        if (!std::isfinite(v)) return;
        v = std::trunc(v);
      }
    }
    if (!representable(want)) return;
    // Narrowing float rounds once into the target.
    Tensor out = x.to(to);
    check("to", out, want, {}, 1);
    keep(out);
  }

  void masked_fill() {
    const Tensor& x = pick();
    Vals a = read(x);
    Shape mshape = in_.ConsumeBool() ? a.shape : pick_shape();
    Tensor mask = fresh(kBool, &mshape);
    Vals m = read(mask);
    double value = pick_value(x.dtype());
    auto run = [&] { return x.masked_fill(mask, value); };
    Shape shape;
    // Out of place, self and mask broadcast together (PyTorch's expand_outplace).
    if (!broadcast(a.shape, m.shape, shape)) return expect_error("masked_fill", run);
    Vals want{shape, {}, a.dtype};
    for_each_index(shape, [&](int64_t, const Shape& idx) {
      want.v.push_back(m.v[broadcast_index(m.shape, idx)] != 0 ? value : a.v[broadcast_index(a.shape, idx)]);
    });
    if (!representable(want)) return;
    view_result("masked_fill", run(), want);
  }

  FuzzedDataProvider in_;
  std::vector<Tensor> pool_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const bool stats = std::getenv("FUZZ_OPS_STATS") != nullptr && std::atexit(print_stats) == 0;
  (void)stats;
  try {
    Fuzzer(data, size).run();
  } catch (const Error&) {
    // Building the first tensors can be refused too (never expected, but not a finding).
  }
  return 0;
}
