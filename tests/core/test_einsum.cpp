// einsum against a definition-by-loops oracle (explicit and implicit outputs, repeated
// labels, broadcasting, several operands), the ellipsis against matmul and permutes,
// gradients, and PyTorch's error texts.
#include <map>
#include <numeric>
#include <sstream>

#include "op_check.h"

using namespace ember;
using ember::test::check_close;
using ember::test::check_error;
using ember::test::check_grad;
using ember::test::check_gradgrad;
using ember::test::rand_leaf;
using ember::test::shape;
using ember::test::values;

namespace {

/// einsum by its definition, for equations of letters with an explicit output: loop over
/// every assignment of the labels and add the product of the operands' elements to the
/// output element selected. A dim of size 1 broadcasts (it is read at index 0).
std::vector<double> naive_einsum(const std::string& inputs, const std::string& output,
                                 const TensorList& ops) {
  std::vector<std::string> subs;
  std::stringstream ss(inputs);
  for (std::string s; std::getline(ss, s, ',');) subs.push_back(s);
  REQUIRE(subs.size() == ops.size());
  std::map<char, int64_t> size;
  for (size_t i = 0; i < ops.size(); ++i)
    for (size_t d = 0; d < subs[i].size(); ++d) size[subs[i][d]] = std::max(size[subs[i][d]], ops[i].size(d));
  std::vector<char> labels;
  for (auto& [l, n] : size) labels.push_back(l);
  std::vector<std::vector<double>> vals;
  for (const Tensor& t : ops) vals.push_back(values(t));
  int64_t out_n = 1;
  for (char l : output) out_n *= size[l];
  std::vector<double> out(static_cast<size_t>(out_n), 0.0);
  std::map<char, int64_t> idx;
  for (char l : labels) idx[l] = 0;
  // Row-major offset of an element of a tensor with subscripts `sub` (sizes from `t`).
  auto offset = [&](const std::string& sub, const Tensor* t) {
    int64_t off = 0;
    for (size_t d = 0; d < sub.size(); ++d) {
      int64_t n = t ? t->size(d) : size[sub[d]];
      off = off * n + (n == 1 ? 0 : idx[sub[d]]);
    }
    return off;
  };
  bool empty = false;  // a label of size 0: no assignments, every output element is 0
  for (char l : labels) empty = empty || size[l] == 0;
  for (bool done = empty; !done;) {
    double prod = 1.0;
    for (size_t i = 0; i < ops.size(); ++i) prod *= vals[i][offset(subs[i], &ops[i])];
    out[offset(output, nullptr)] += prod;
    // The next assignment (an odometer over the labels).
    done = true;
    for (size_t j = labels.size(); j-- > 0;) {
      if (++idx[labels[j]] < size[labels[j]]) {
        done = false;
        break;
      }
      idx[labels[j]] = 0;
    }
  }
  return out;
}

/// Checks einsum("inputs->output") against the oracle: shape and values.
void check_einsum(const std::string& inputs, const std::string& output, const TensorList& ops,
                  double atol = 1e-10) {
  INFO(inputs << "->" << output);
  Tensor r = einsum(inputs + "->" + output, ops);
  std::map<char, int64_t> size;  // each label's size, the largest any operand gives it
  size_t op = 0, pos = 0;
  for (char c : inputs) {
    if (c == ',') {
      ++op;
      pos = 0;
      continue;
    }
    size[c] = std::max(size[c], ops[op].size(static_cast<int64_t>(pos++)));
  }
  std::vector<int64_t> expected_shape;
  for (char l : output) expected_shape.push_back(size[l]);
  CHECK(shape(r) == expected_shape);
  check_close(r, naive_einsum(inputs, output, ops), atol);
}

Tensor arange_as(IntArrayRef s, ScalarType dt = kDouble) {
  int64_t n = std::accumulate(s.begin(), s.end(), int64_t{1}, std::multiplies<>());
  return (arange(n, dt) - n / 3).view(s);
}

}  // namespace

TEST_CASE("einsum: explicit outputs against the loop definition") {
  Tensor m23 = arange_as({2, 3}), m34 = arange_as({3, 4}), sq = arange_as({3, 3});
  check_einsum("ij,jk", "ik", {m23, m34});                        // matrix product
  check_einsum("ii", "i", {sq});                                  // diagonal
  check_einsum("ii", "", {sq});                                   // trace
  check_einsum("ij", "ji", {m23});                                // transpose
  check_einsum("ij", "", {m23});                                  // sum
  check_einsum("ij", "j", {m23});                                 // column sums
  check_einsum("i,j", "ij", {arange_as({2}), arange_as({3})});    // outer
  check_einsum("i,i", "", {arange_as({4}), arange_as({4}) + 1});  // dot
  check_einsum("bij,bjk", "bik", {arange_as({2, 2, 3}), arange_as({2, 3, 2})});
  check_einsum("iij", "j", {arange_as({3, 3, 2})});  // diagonal then sum
  check_einsum("ii,ij", "j", {sq, m34.slice(1, 0, 3)});
  check_einsum("ijk,ikl,lm", "jm", {arange_as({2, 3, 4}), arange_as({2, 4, 2}), arange_as({2, 3})});
  check_einsum("ij,kl", "ijkl", {m23, arange_as({2, 2})});  // no contraction
  check_einsum("ij,jk,kl", "il", {m23, m34, arange_as({4, 2})});
  check_einsum("bi,bi", "b", {arange_as({1, 3}), arange_as({2, 3})});  // size-1 label broadcasts
  check_einsum("i,i", "", {arange_as({1}) + 5, arange_as({3})});
  check_einsum("ijk", "kij", {arange_as({2, 3, 4}).transpose(0, 2)});  // non-contiguous operand
  check_einsum("Ab,bA", "", {m23, m23.t()});                           // upper-case labels
}

TEST_CASE("einsum: implicit output is the labels used once, upper case first") {
  Tensor m23 = arange_as({2, 3}), m34 = arange_as({3, 4});
  check_close(einsum("ij,jk", {m23, m34}), einsum("ij,jk->ik", {m23, m34}));
  check_close(einsum("ba", {m23}), m23.t());  // output "ab": the transpose
  check_close(einsum("Ab", {m23}), m23);
  check_close(einsum("bA", {m23}), m23.t());                     // "A" sorts before "b"
  check_close(einsum("ii", {arange_as({3, 3})}), {-3 + 1 + 5});  // trace of (arange(9) - 3)
  check_close(einsum("i,j", {tensor({0.0, 1.0}), tensor({0.0, 1.0, 2.0})}), {0, 0, 0, 0, 1, 2});
  check_close(einsum(" i j , j k -> i k ", {m23, m34}), m23.mm(m34));  // spaces are ignored
}

TEST_CASE("einsum: ellipsis broadcasting") {
  Tensor a = arange_as({5, 2, 3}), b = arange_as({1, 3, 4});
  check_close(einsum("...ij,...jk", {a, b}), matmul(a, b));
  check_close(einsum("...ij,...jk->...ik", {a, b}), matmul(a, b));
  Tensor c = arange_as({2, 3, 4});
  check_close(einsum("i...->i", {c}), c.sum({1, 2}));
  check_close(einsum("...->", {c}), c.sum());
  check_close(einsum("i...j->j...i", {c}), c.permute({2, 1, 0}));
  CHECK(shape(einsum("i...j->j...i", {c})) == std::vector<int64_t>{4, 3, 2});
  check_close(einsum("ij...,jk...->ik...", {c, arange_as({3, 2, 4})}),
              naive_einsum("ijz,jkz", "ikz", {c, arange_as({3, 2, 4})}));
  check_close(einsum("...,...->...", {arange_as({2, 3}), arange_as({3})}),
              arange_as({2, 3}) * arange_as({3}));
  check_close(einsum("ij->...", {arange_as({2, 3})}), arange_as({2, 3}).sum());
  // A repeated label before the ellipsis: the diagonal's dims are not the ellipsis's.
  check_close(einsum("ii...->...", {arange_as({3, 3, 2})}), naive_einsum("iiz", "z", {arange_as({3, 3, 2})}));
  check_close(einsum("...ii->...i", {arange_as({2, 3, 3})}),
              naive_einsum("zii", "zi", {arange_as({2, 3, 3})}));
}

TEST_CASE("einsum: dtypes, 0-dim and empty operands") {
  Tensor a = tensor({1, 2, 3, 4, 5, 6}).view({2, 3}), b = tensor({1, 0, 0, 1, 1, 1}).view({3, 2});
  Tensor r = einsum("ij,jk->ik", {a, b});
  CHECK(r.dtype() == kLong);
  check_close(r, {1 + 3, 2 + 3, 4 + 6, 5 + 6});
  check_close(einsum("ij,jk->ik", {a.to(kFloat), b.to(kFloat)}), {4, 5, 10, 11});
  // Without a contraction the operands multiply with mul's type promotion.
  CHECK(einsum("ij,ij->ij", {ones({2, 3}), ones({2, 3}, kLong)}).dtype() == kFloat);
  check_close(einsum("", {tensor(2.0)}), {2});
  check_close(einsum("->", {tensor(2.0)}), {2});
  check_close(einsum(",->", {tensor(2.0), tensor(3.0)}), {6});
  check_close(einsum("i->", {zeros({0})}), {0});
  check_close(einsum("ij,jk->ik", {ones({2, 0}), ones({0, 2})}), {0, 0, 0, 0});
  CHECK(shape(einsum("ij,jk->ik", {ones({0, 3}), ones({3, 2})})) == std::vector<int64_t>{0, 2});
}

TEST_CASE("einsum: gradcheck") {
  auto eq = [](const char* e) { return [e](const TensorList& x) { return einsum(e, x); }; };
  check_grad(eq("ij,jk->ik"), {rand_leaf({2, 3}), rand_leaf({3, 2})});
  check_grad(eq("bij,bjk->bik"), {rand_leaf({2, 2, 3}), rand_leaf({2, 3, 2})});
  check_grad(eq("ii->i"), {rand_leaf({3, 3})});
  check_grad(eq("i,j->ij"), {rand_leaf({2}), rand_leaf({3})});
  check_grad(eq("...ij,...jk"), {rand_leaf({2, 2, 3}), rand_leaf({1, 3, 2})});
  check_grad(eq("ij,jk,kl->il"), {rand_leaf({2, 3}), rand_leaf({3, 2}), rand_leaf({2, 2})});
  check_grad(eq("iij->j"), {rand_leaf({2, 2, 3})});
  check_grad(eq("bi,bi->b"), {rand_leaf({1, 3}), rand_leaf({2, 3})});
  check_grad(
      [](const TensorList& x) {
        return einsum("ij,jk", {x[0].t(), x[1]});
      },
      {rand_leaf({3, 2}), rand_leaf({3, 2})});
  check_gradgrad(eq("ij,jk->ik"), {rand_leaf({2, 3}), rand_leaf({3, 2})});
}

TEST_CASE("einsum errors use PyTorch's texts") {
  check_error(
      [] {
        einsum("ij", {ones({2, 3, 4})});
      },
      "einsum(): the number of subscripts in the equation (2) does not match the number of dimensions (3) "
      "for operand 0 and no ellipsis was given");
  check_error(
      [] {
        einsum("ij,jk", {ones({2, 3}), ones({2, 3, 4})});
      },
      "einsum(): the number of subscripts in the equation (2) does not match the number of dimensions (3) "
      "for operand 1 and no ellipsis was given");
  check_error(
      [] {
        einsum("ijk...", {ones({2, 3})});
      },
      "einsum(): the number of subscripts in the equation (3) is more than the number of dimensions (2) for "
      "operand 0");
  check_error(
      [] {
        einsum("ij,jk", {ones({2, 3}), ones({4, 4})});
      },
      "einsum(): subscript j has size 4 for operand 1 which does not broadcast with previously seen size 3");
  check_error(
      [] {
        einsum("ij,jk", {ones({2, 3})});
      },
      "einsum(): fewer operands were provided than specified in the equation");
  check_error(
      [] {
        einsum("i", {ones({2}), ones({2})});
      },
      "einsum(): more operands were provided than specified in the equation");
  check_error(
      [] {
        einsum("ij->k", {ones({2, 3})});
      },
      "einsum(): output subscript k does not appear in the equation for any input operand");
  check_error(
      [] {
        einsum("ij->ii", {ones({2, 3})});
      },
      "einsum(): output subscript i appears more than once in the output");
  check_error(
      [] {
        einsum("i1->i", {ones({2, 3})});
      },
      "einsum(): invalid subscript given at index 1 in the equation string, subscripts must be in [a-zA-Z]");
  check_error(
      [] {
        einsum("ij-k", {ones({2, 3})});
      },
      "einsum(): invalid subscript given at index 2 in the equation");
  check_error(
      [] {
        einsum("ij->i->j", {ones({2, 3})});
      },
      "einsum(): invalid subscript given at index 5 in the equation");
  check_error(
      [] {
        einsum("ii", {ones({2, 3})});
      },
      "einsum(): subscript i is repeated for operand 0 but the sizes don't match, 3 != 2");
  check_error(
      [] {
        einsum("i..j", {ones({2, 3})});
      },
      "einsum(): found '.' for operand 0 that is not part of any ellipsis");
  check_error(
      [] {
        einsum("i...j...", {ones({2, 3})});
      },
      "einsum(): found '.' for operand 0 for which an ellipsis was already found");
  check_error([] { einsum("i->i.", {ones({2})}); },
              "einsum(): found '.' for output that is not part of any ellipsis (...)");
  check_error([] { einsum("...->......", {ones({2})}); },
              "einsum(): found '.' for output but an ellipsis (...) was already found");
  check_error(
      [] {
        einsum("...ij,...jk", {ones({5, 2, 3}), ones({2, 3, 4})});
      },
      "einsum(): dimension 0 covered by ellipsis in operand 1has size 2 which does not broadcast with "
      "previously seen ellipsis with size 5 for the respective dimension");
  check_error([] { einsum("", TensorList{}); }, "einsum(): must provide at least one operand");
  check_error(
      [] {
        einsum("ij,ij->", {ones({2, 3}), ones({2, 3}, kDouble)});
      },
      "expected scalar type Float but found Double");
}
