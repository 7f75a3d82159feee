// einsum, as PyTorch computes it: parse the equation into one label list per operand,
// align every operand to one common order of dimensions (output dims first, then the
// contracted ones; size 1 where an operand lacks a label; diagonals for repeated labels),
// then contract the operands pairwise from the left with one bmm per pair (sumproduct_pair)
// and sum whatever is left. Built from public ops, so it is differentiable through them.
#include <algorithm>
#include <array>
#include <deque>
#include <string>

#include "ember/core/ops/einsum.h"
#include "ember/core/ops/linalg.h"
#include "ember/core/ops/shape.h"

namespace ember {
namespace {

// Labels are [A-Za-z], numbered 0..51 with the upper case first (so an implicit output
// lists them in that order, as PyTorch does); the ellipsis is label 52.
constexpr int kLetters = 26;
constexpr int kLabels = 2 * kLetters;
constexpr int kEllipsis = kLabels;

bool is_label(unsigned char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
int label_index(unsigned char c) { return c <= 'Z' ? c - 'A' : c - 'a' + kLetters; }
char label_char(int s) { return static_cast<char>(s < kLetters ? 'A' + s : 'a' + s - kLetters); }

using Labels = std::vector<int>;

/// The labels of each operand in the equation's left-hand side.
std::vector<Labels> parse_operands(std::string_view lhs, size_t num_ops) {
  std::vector<Labels> labels(num_ops);
  size_t op = 0;
  bool ellipsis = false;
  for (size_t i = 0; i < lhs.size(); ++i) {
    const unsigned char c = lhs[i];
    if (c == ' ') continue;
    if (c == '.') {
      EMBER_CHECK(!ellipsis, "einsum(): found '.' for operand ", op,
                  " for which an ellipsis was already found");
      EMBER_CHECK(i + 2 < lhs.size() && lhs[++i] == '.' && lhs[++i] == '.',
                  "einsum(): found '.' for operand ", op, " that is not part of any ellipsis");
      labels[op].push_back(kEllipsis);
      ellipsis = true;
    } else if (c == ',') {
      ++op;
      EMBER_CHECK(op < num_ops, "einsum(): fewer operands were provided than specified in the equation");
      ellipsis = false;
    } else {
      EMBER_CHECK(is_label(c), "einsum(): invalid subscript given at index ", i,
                  " in the equation string, subscripts must be in [a-zA-Z]");
      labels[op].push_back(label_index(c));
    }
  }
  EMBER_CHECK(op == num_ops - 1, "einsum(): more operands were provided than specified in the equation");
  return labels;
}

/// Where each label (and the ellipsis's dims) sits in the common order of dimensions.
struct Layout {
  std::array<int64_t, kLabels> pos;  // -1: the label is not used
  int64_t ell_pos = 0;               // first of the ellipsis's dims
  int64_t ell_dims = 0;              // how many dims the ellipsis covers (the most any operand has)
  int64_t out_dims = 0;              // the first out_dims dims are the output's
  int64_t total = 0;
};

/// Counts label uses and the ellipsis's width, checking each operand's rank.
std::array<int64_t, kLabels> count_labels(const std::vector<Labels>& labels, const TensorList& operands,
                                          int64_t& ell_dims) {
  std::array<int64_t, kLabels> count{};
  for (size_t i = 0; i < operands.size(); ++i) {
    const int64_t ndim = operands[i].dim();
    int64_t nlabels = static_cast<int64_t>(labels[i].size());
    bool has_ellipsis = false;
    for (int l : labels[i]) {
      if (l == kEllipsis)
        has_ellipsis = true;
      else
        ++count[l];
    }
    if (has_ellipsis) {
      --nlabels;
      ell_dims = std::max(ell_dims, ndim - nlabels);
    }
    EMBER_CHECK(has_ellipsis ? nlabels <= ndim : nlabels == ndim,
                "einsum(): the number of subscripts in the equation (", nlabels,
                has_ellipsis ? ") is more than the number of dimensions ("
                             : ") does not match the number of dimensions (",
                ndim, ") for operand ", i, has_ellipsis ? "" : " and no ellipsis was given");
  }
  return count;
}

/// Output dims first: the explicit right-hand side, or (implicit) the ellipsis followed by
/// the labels used once, in label order. Contracted labels (and an ellipsis absent from the
/// output) follow.
Layout make_layout(std::string_view equation, size_t arrow, const std::array<int64_t, kLabels>& count,
                   int64_t ell_dims) {
  Layout g;
  g.pos.fill(-1);
  g.ell_dims = ell_dims;
  int64_t next = 0;
  bool ell_in_output = false;
  if (arrow == std::string_view::npos) {
    next = ell_dims;
    ell_in_output = true;
    for (int l = 0; l < kLabels; ++l)
      if (count[l] == 1) g.pos[l] = next++;
  } else {
    std::string_view rhs = equation.substr(arrow + 2);
    for (size_t i = 0; i < rhs.size(); ++i) {
      const unsigned char c = rhs[i];
      if (c == ' ') continue;
      if (c == '.') {
        EMBER_CHECK(!ell_in_output, "einsum(): found '.' for output but an ellipsis (...) was already found");
        EMBER_CHECK(i + 2 < rhs.size() && rhs[++i] == '.' && rhs[++i] == '.',
                    "einsum(): found '.' for output that is not part of any ellipsis (...)");
        g.ell_pos = next;
        next += ell_dims;
        ell_in_output = true;
        continue;
      }
      EMBER_CHECK(is_label(c), "einsum(): invalid subscript given at index ", arrow + 2 + i,
                  " in the equation string, subscripts must be in [a-zA-Z]");
      const int l = label_index(c);
      EMBER_CHECK(count[l] > 0 && g.pos[l] == -1, "einsum(): output subscript ", c,
                  g.pos[l] > -1 ? " appears more than once in the output"
                                : " does not appear in the equation for any input operand");
      g.pos[l] = next++;
    }
  }
  g.out_dims = next;
  if (!ell_in_output) {
    g.ell_pos = next;
    next += ell_dims;
  }
  for (int l = 0; l < kLabels; ++l)
    if (count[l] > 0 && g.pos[l] == -1) g.pos[l] = next++;
  g.total = next;
  return g;
}

/// Sizes seen so far per label and ellipsis dim (to check they broadcast), and per aligned
/// dim the number of operands in which it is larger than 1 (to know when it can be summed).
struct Seen {
  std::array<int64_t, kLabels> label_size;
  std::vector<int64_t> ell_size, dim_count;
};

/// Brings one operand into the common order: diagonals for repeated labels, size-1 dims for
/// labels it lacks, then one permute.
Tensor align(Tensor op, size_t index, const Labels& labels, const Layout& g, Seen& seen) {
  std::vector<int64_t> perm(g.total, -1);
  // Dims the ellipsis covers, counted before any diagonal shrinks the operand.
  const int64_t covered = op.dim() - (static_cast<int64_t>(labels.size()) - 1);
  int64_t dim = 0;
  for (int l : labels) {
    if (l == kEllipsis) {
      // The ellipsis's dims are right-aligned with those of the widest ellipsis.
      for (int64_t j = g.ell_dims - covered; j < g.ell_dims; ++j) {
        if (op.size(dim) != 1) {
          // (sic: PyTorch's message lacks the space before "has".)
          EMBER_CHECK(seen.ell_size[j] == 1 || seen.ell_size[j] == op.size(dim), "einsum(): dimension ", dim,
                      " covered by ellipsis in operand ", index, "has size ", op.size(dim),
                      " which does not broadcast with previously seen ellipsis with size ", seen.ell_size[j],
                      " for the respective dimension");
          seen.ell_size[j] = op.size(dim);
          ++seen.dim_count[g.ell_pos + j];
        }
        perm[g.ell_pos + j] = dim++;
      }
    } else if (perm[g.pos[l]] == -1) {
      if (op.size(dim) != 1) {
        EMBER_CHECK(seen.label_size[l] == 1 || seen.label_size[l] == op.size(dim), "einsum(): subscript ",
                    label_char(l), " has size ", op.size(dim), " for operand ", index,
                    " which does not broadcast with previously seen size ", seen.label_size[l]);
        seen.label_size[l] = op.size(dim);
        ++seen.dim_count[g.pos[l]];
      }
      perm[g.pos[l]] = dim++;
    } else {
      // A repeated label: keep the diagonal, in the place of the label's first dim.
      const int64_t prev = perm[g.pos[l]];
      EMBER_CHECK(op.size(dim) == op.size(prev), "einsum(): subscript ", label_char(l),
                  " is repeated for operand ", index, " but the sizes don't match, ", op.size(dim),
                  " != ", op.size(prev));
      op = op.diagonal(0, prev, dim).movedim(-1, prev);
    }
  }
  for (int64_t& p : perm) {
    if (p != -1) continue;
    op = op.unsqueeze(dim);
    p = dim++;
  }
  return op.permute(perm);
}

/// (left * right).sum(sum_dims, keepdim=true) for two aligned operands, as one bmm: dims
/// larger than 1 in both operands are the batch, those only in left the rows, those only
/// in right the columns, and the summed dims the inner dimension.
Tensor sumproduct_pair(Tensor left, Tensor right, const std::vector<int64_t>& sum_dims) {
  if (sum_dims.empty()) return left * right;
  const int64_t nd = left.dim();
  std::vector<bool> summed(nd, false);
  for (int64_t d : sum_dims) summed[d] = true;
  std::vector<int64_t> both, lonly, ronly;
  int64_t both_n = 1, l_n = 1, r_n = 1, sum_n = 1;
  for (int64_t d = 0; d < nd; ++d) {
    const bool in_l = left.size(d) != 1, in_r = right.size(d) != 1;
    if (summed[d]) {
      if (in_l && in_r)
        sum_n *= left.size(d);
      else if (in_l)
        left = left.sum({d}, true);  // in one operand only: sum it right away
      else if (in_r)
        right = right.sum({d}, true);
    } else if (in_l && in_r) {
      both.push_back(d);
      both_n *= left.size(d);
    } else if (in_l) {
      lonly.push_back(d);
      l_n *= left.size(d);
    } else {
      ronly.push_back(d);
      r_n *= right.size(d);
    }
  }
  auto concat = [](std::initializer_list<const std::vector<int64_t>*> parts) {
    std::vector<int64_t> out;
    for (const auto* p : parts) out.insert(out.end(), p->begin(), p->end());
    return out;
  };
  // left as [both, lonly, summed] (ronly dims have size 1), right as [both, summed, ronly].
  std::vector<int64_t> lperm = concat({&both, &lonly, &sum_dims, &ronly});
  std::vector<int64_t> rperm = concat({&both, &sum_dims, &ronly, &lonly});
  Tensor product = left.permute(lperm)
                       .reshape({both_n, l_n, sum_n})
                       .bmm(right.permute(rperm).reshape({both_n, sum_n, r_n}));
  // The product's dims are [both, lonly, summed (now 1), ronly]; put them back in order.
  std::vector<int64_t> order = concat({&both, &lonly, &sum_dims, &ronly});
  DimVector sizes, back(nd);
  for (size_t i = 0; i < order.size(); ++i) {
    const int64_t d = order[i];
    sizes.push_back(summed[d] ? 1 : (left.size(d) != 1 ? left.size(d) : right.size(d)));
    back[d] = static_cast<int64_t>(i);
  }
  return product.view(sizes).permute(back);
}

/// Contracts the aligned operands pairwise from the left. A contracted dim is summed as soon
/// as at most one operand still has it larger than 1.
Tensor contract(std::deque<Tensor> ops, const Layout& g, std::vector<int64_t>& dim_count) {
  while (ops.size() > 1) {
    Tensor a = ops[0], b = ops[1];
    ops.pop_front();
    ops.pop_front();
    std::vector<int64_t> sum_dims, a_sum, b_sum;
    for (int64_t d = g.out_dims; d < g.total; ++d) {
      if (a.size(d) != 1 && b.size(d) != 1) {
        if (--dim_count[d] == 1) {  // no later operand has it: sum it in this product
          sum_dims.push_back(d);
          dim_count[d] = 0;
        }
      } else if (dim_count[d] == 1) {  // only a (or only b) has it
        if (a.size(d) != 1)
          a_sum.push_back(d);
        else if (b.size(d) != 1)
          b_sum.push_back(d);
        else
          continue;
        dim_count[d] = 0;
      }
    }
    if (!a_sum.empty()) a = a.sum(a_sum, true);
    if (!b_sum.empty()) b = b.sum(b_sum, true);
    ops.push_front(sumproduct_pair(a, b, sum_dims));
  }
  return ops[0];
}

}  // namespace

Tensor einsum(std::string_view equation, const TensorList& operands) {
  EMBER_CHECK(!operands.empty(), "einsum(): must provide at least one operand");
  const size_t arrow = equation.find("->");
  const std::vector<Labels> labels = parse_operands(equation.substr(0, arrow), operands.size());
  int64_t ell_dims = 0;
  const auto count = count_labels(labels, operands, ell_dims);
  const Layout g = make_layout(equation, arrow, count, ell_dims);

  Seen seen;
  seen.label_size.fill(1);
  seen.ell_size.assign(ell_dims, 1);
  seen.dim_count.assign(g.total, 0);
  std::deque<Tensor> ops;
  for (size_t i = 0; i < operands.size(); ++i) ops.push_back(align(operands[i], i, labels[i], g, seen));

  if (g.total == g.out_dims) return contract(std::move(ops), g, seen.dim_count);
  if (ops.size() == 1) {
    std::vector<int64_t> dims;
    for (int64_t d = g.out_dims; d < g.total; ++d) dims.push_back(d);
    return ops[0].sum(dims);
  }
  // Every contracted dim was summed during the contraction and has size 1 now.
  Tensor result = contract(std::move(ops), g, seen.dim_count);
  DimVector sizes(result.sizes().slice(0, g.out_dims));
  return result.view(sizes);
}

}  // namespace ember
