// Small building blocks: DimVector (inline storage and growth), ArrayRef, intrusive_ptr, and
// the shape helpers of core/shape.h with PyTorch's error texts.
#include <vector>

#include "ember/core/shape.h"
#include "op_check.h"

using namespace ember;
using ember::test::check_error;

using Shape = std::vector<int64_t>;

TEST_CASE("test_shape_utils: DimVector") {
  DimVector v;
  CHECK(v.empty());
  CHECK(v.size() == 0);
  const int64_t* inline_data = v.data();
  for (int64_t i = 0; i < 6; ++i) v.push_back(i * 10);
  CHECK(v.data() == inline_data);  // still inline at kInline elements
  // Growth past the inline capacity moves to the heap and keeps the values.
  for (int64_t i = 6; i < 40; ++i) v.push_back(i * 10);
  CHECK(v.size() == 40);
  CHECK(v.data() != inline_data);
  bool ok = true;
  for (int64_t i = 0; i < 40; ++i) ok = ok && v[i] == i * 10;
  CHECK(ok);
  CHECK(v.back() == 390);

  // Copies are deep; moves steal the heap buffer.
  DimVector c = v;
  c[0] = -1;
  CHECK(v[0] == 0);
  CHECK(c == c);
  CHECK(c != v);
  const int64_t* heap = v.data();
  DimVector m = std::move(v);
  CHECK(m.data() == heap);
  CHECK(m.size() == 40);
  CHECK(v.size() == 0);  // NOLINT: moved-from is empty and usable
  v.push_back(5);
  CHECK(v.vec() == Shape{5});
  // Move of an inline vector copies the elements.
  DimVector small{1, 2, 3};
  DimVector small2 = std::move(small);
  CHECK(small2.vec() == Shape{1, 2, 3});
  // Move-assign over a heap vector.
  m = std::move(small2);
  CHECK(m.vec() == Shape{1, 2, 3});
  // Copy-assign a heap vector into an inline one and back.
  DimVector big(20, 7);
  DimVector tgt{1};
  tgt = big;
  CHECK(tgt.size() == 20);
  CHECK(tgt[19] == 7);
  tgt = DimVector{4, 5};
  CHECK(tgt.vec() == Shape{4, 5});

  // insert / erase / resize / assign / pop_back / clear.
  DimVector e{1, 2, 3};
  e.insert(0, 0);
  e.insert(4, 4);
  e.insert(2, 9);
  CHECK(e.vec() == Shape{0, 1, 9, 2, 3, 4});
  e.insert(3, 8);  // crosses the inline capacity
  CHECK(e.vec() == Shape{0, 1, 9, 8, 2, 3, 4});
  e.erase(2);
  e.erase(2);
  CHECK(e.vec() == Shape{0, 1, 2, 3, 4});
  e.resize(7, -1);
  CHECK(e.vec() == Shape{0, 1, 2, 3, 4, -1, -1});
  e.resize(2);
  CHECK(e.vec() == Shape{0, 1});
  e.pop_back();
  CHECK(e.vec() == Shape{0});
  e.assign(3, 2);
  CHECK(e.vec() == Shape{2, 2, 2});
  e.clear();
  CHECK(e.empty());
  // From and to IntArrayRef.
  std::vector<int64_t> src{3, 1, 4, 1, 5, 9, 2, 6};
  IntArrayRef src_ref(src);
  DimVector fr(src_ref);
  CHECK(fr.vec() == src);
  IntArrayRef back = fr;
  CHECK(back.size() == 8);
  CHECK(back.equals(IntArrayRef(src)));
}

TEST_CASE("test_shape_utils: ArrayRef") {
  std::vector<int64_t> v{2, 3, 4};
  IntArrayRef a(v);
  CHECK(a.size() == 3);
  CHECK(a.front() == 2);
  CHECK(a.back() == 4);
  CHECK(a[1] == 3);
  CHECK(a.at(2) == 4);
  check_error([&] { (void)a.at(3); }, "ArrayRef: index 3 out of range for size 3");
  CHECK(a.slice(1).vec() == Shape{3, 4});
  CHECK(a.slice(0, 2).vec() == Shape{2, 3});
  CHECK(a == IntArrayRef(v));
  std::vector<int64_t> w{2, 3};
  CHECK(a != IntArrayRef(w));
  int64_t one = 5;
  IntArrayRef single(one);
  CHECK(single.size() == 1);
  CHECK(single[0] == 5);
  CHECK(IntArrayRef().empty());
  std::ostringstream s;
  s << a << IntArrayRef();
  CHECK(s.str() == "[2, 3, 4][]");
  // Braced lists bind to it for the duration of a call.
  auto count = [](IntArrayRef r) { return r.size(); };
  CHECK(count({1, 2, 3, 4}) == 4);
  CHECK(count({}) == 0);
  CHECK(count(DimVector{1, 2}) == 2);
}

TEST_CASE("test_shape_utils: intrusive_ptr") {
  struct Obj : intrusive_target {
    int* deleted;
    explicit Obj(int* d) : deleted(d) {}
    ~Obj() override { ++*deleted; }
  };
  int deleted = 0;
  {
    auto p = intrusive_ptr<Obj>::make(&deleted);
    CHECK(p.use_count() == 1);
    {
      intrusive_ptr<Obj> q = p;
      CHECK(p.use_count() == 2);
      CHECK(q == p);
    }
    CHECK(p.use_count() == 1);
    intrusive_ptr<Obj> r = std::move(p);
    CHECK(!p);
    CHECK(r.use_count() == 1);
    intrusive_ptr<intrusive_target> up = r;  // upcast shares the count
    CHECK(r.use_count() == 2);
    CHECK(deleted == 0);
  }
  CHECK(deleted == 1);
  // A Tensor handle is one intrusive pointer: copies share one TensorImpl.
  Tensor t = zeros({2});
  Tensor u = t;
  CHECK(t.use_count() == 2);
  CHECK(u.is_same(t));
}

TEST_CASE("test_shape_utils: maybe_wrap_dim and wrap_dims") {
  CHECK(maybe_wrap_dim(-1, 3) == 2);
  CHECK(maybe_wrap_dim(0, 3) == 0);
  CHECK(maybe_wrap_dim(-3, 3) == 0);
  CHECK(maybe_wrap_dim(-1, 0) == 0);  // 0-d tensors accept -1 and 0
  CHECK(maybe_wrap_dim(0, 0) == 0);
  // torch.zeros(2, 3).sum(2)
  check_error([] { maybe_wrap_dim(2, 2); }, "Dimension out of range (expected to be in range of [-2, 1], but got 2)");
  check_error([] { maybe_wrap_dim(-3, 2); }, "Dimension out of range (expected to be in range of [-2, 1], but got -3)");
  check_error([] { maybe_wrap_dim(1, 0); }, "Dimension out of range (expected to be in range of [-1, 0], but got 1)");
  check_error([] { maybe_wrap_dim(0, 0, false); }, "dimension specified as 0 but tensor has no dimensions");
  CHECK(wrap_dims({-1, 0}, 3).vec() == Shape{2, 0});
  check_error([] { wrap_dims({1, -2}, 3); }, "dim 1 appears multiple times in the list of dims");
  CHECK(dim_mask({}, 3) == 0b111);
  CHECK(dim_mask({0, -1}, 4) == 0b1001);
  CHECK(dim_mask({}, 0) == 0);
}

TEST_CASE("test_shape_utils: strides and contiguity") {
  CHECK(prod_of({2, 3, 4}) == 24);
  CHECK(prod_of({}) == 1);
  CHECK(prod_of({2, 0}) == 0);
  CHECK(contiguous_strides({2, 3, 4}).vec() == Shape{12, 4, 1});
  CHECK(contiguous_strides({}).vec() == Shape{});
  CHECK(contiguous_strides({2, 0, 3}).vec() == Shape{3, 3, 1});  // size 0 counts as 1, as PyTorch
  CHECK(is_contiguous_geometry({2, 3}, {3, 1}));
  CHECK(!is_contiguous_geometry({2, 3}, {1, 2}));
  CHECK(is_contiguous_geometry({2, 1, 3}, {3, 99, 1}));  // size-1 strides do not matter
  CHECK(is_contiguous_geometry({0, 3}, {7, 5}));         // empty: always contiguous
  CHECK(is_contiguous_geometry({}, {}));
  CHECK(!is_contiguous_geometry({3}, {0}));              // broadcast
  CHECK(has_internal_overlap({3}, {0}));
  CHECK(has_internal_overlap({2, 3}, {1, 0}));
  CHECK(!has_internal_overlap({1, 3}, {0, 1}));  // stride 0 over size 1 is harmless
  CHECK(!has_internal_overlap({2, 3}, {1, 2}));
  check_error([] { check_no_internal_overlap({4}, {0}); },
              "unsupported operation: more than one element of the written-to tensor refers to a single memory "
              "location. Please clone() the tensor before performing the operation.");
}

TEST_CASE("test_shape_utils: broadcast_shapes and infer_size") {
  CHECK(broadcast_shapes({2, 1, 4}, {3, 1}).vec() == Shape{2, 3, 4});
  CHECK(broadcast_shapes({}, {5}).vec() == Shape{5});
  CHECK(broadcast_shapes({0, 1}, {1, 3}).vec() == Shape{0, 3});
  CHECK(broadcast_shapes({2, 3}, {2, 3}).vec() == Shape{2, 3});
  // torch.broadcast_shapes((2, 3), (4,)): dimension index in the broadcast shape
  check_error([] { broadcast_shapes({2, 3}, {4}); },
              "The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1");
  check_error([] { broadcast_shapes({5, 2, 3}, {4, 1}); },
              "The size of tensor a (2) must match the size of tensor b (4) at non-singleton dimension 1");

  CHECK(infer_size({2, -1}, 6).vec() == Shape{2, 3});
  CHECK(infer_size({-1}, 0).vec() == Shape{0});
  CHECK(infer_size({3, 4}, 12).vec() == Shape{3, 4});
  // torch.zeros(6).view(4, -1) / view(2, 5) / view(-1, -1) / view(0, -1)
  check_error([] { infer_size({4, -1}, 6); }, "shape '[4, -1]' is invalid for input of size 6");
  check_error([] { infer_size({2, 5}, 6); }, "shape '[2, 5]' is invalid for input of size 6");
  check_error([] { infer_size({-1, -1}, 6); }, "only one dimension can be inferred");
  check_error([] { infer_size({0, -1}, 0); },
              "cannot reshape tensor of 0 elements into shape [0, -1] because the unspecified dimension size -1 "
              "can be any value and is ambiguous");
  check_error([] { infer_size({0, -1}, 6); }, "shape '[0, -1]' is invalid for input of size 6");
  check_error([] { infer_size({-2, 3}, 6); }, "invalid shape dimension -2");
}

TEST_CASE("test_shape_utils: compute_view_strides") {
  // Contiguous (2, 3, 4) viewed as (6, 4) and (24,) and (2, 12).
  CHECK(compute_view_strides({2, 3, 4}, {12, 4, 1}, {6, 4})->vec() == Shape{4, 1});
  CHECK(compute_view_strides({2, 3, 4}, {12, 4, 1}, {24})->vec() == Shape{1});
  CHECK(compute_view_strides({2, 3, 4}, {12, 4, 1}, {2, 1, 12})->vec() == Shape{12, 12, 1});
  // A transposed (3, 2) tensor with strides (1, 3) cannot be flattened, but splitting a dim works.
  CHECK(!compute_view_strides({3, 2}, {1, 3}, {6}).has_value());
  CHECK(compute_view_strides({4, 2}, {1, 4}, {2, 2, 2})->vec() == Shape{2, 1, 4});
  // Merging dims that are contiguous among themselves inside a strided tensor.
  CHECK(compute_view_strides({2, 3, 4}, {24, 4, 1}, {2, 12})->vec() == Shape{24, 1});
  CHECK(!compute_view_strides({2, 3, 4}, {24, 8, 1}, {2, 12}).has_value());
  // 0-dim and empty tensors.
  CHECK(compute_view_strides({}, {}, {1, 1})->vec() == Shape{1, 1});
  CHECK(compute_view_strides({0, 3}, {3, 1}, {3, 0})->vec() == Shape{1, 1});  // torch: (1, 1)
}
