// Reductions over all elements and over dims: sum/mean/prod/max/min with indices, argmax,
// var/std, norm, logsumexp, all/any; scans (cumsum/cumprod); sort/argsort/topk.
#include "compat.h"

using compat::show;

int main() {
  auto x = torch::tensor({{1.0, 5.0, 3.0}, {4.0, -2.0, 6.0}});
  auto y = torch::arange(24, torch::kDouble).reshape({2, 3, 4}).sin();

  show("sum", x.sum());
  show("sum_dim0", x.sum({0}));
  show("sum_dim1_keepdim", x.sum({1}, true));
  show("sum_dims", y.sum(torch::IntArrayRef{0, 2}));
  show("sum_negative_dim", y.sum({-1}));
  show("sum_all_dims", y.sum(torch::IntArrayRef{0, 1, 2}));
  show("sum_dtype", x.sum(torch::kDouble));
  show("sum_empty", torch::zeros({0}).sum());
  show("sum_empty_dim", torch::zeros({0, 3}).sum({0}));
  show("sum_transposed", y.transpose(0, 2).sum({0}));
  show("mean", x.mean());
  show("mean_dim1", x.mean({1}));
  show("mean_dims_keepdim", y.mean(torch::IntArrayRef{0, 1}, true));
  show("mean_empty", torch::zeros({0}).mean());
  show("prod", x.prod());
  show("prod_dim1", x.prod(1));
  show("prod_dim0_keepdim", x.prod(0, true));

  show("max", x.max());
  show("min", x.min());
  auto [mx, imx] = x.max(1);
  show("max_dim1_values", mx);
  show("max_dim1_indices", imx);
  auto [mn, imn] = y.min(0, true);
  show("min_dim0_values", mn);
  show("min_dim0_indices", imn);
  show("amax", y.amax(torch::IntArrayRef{0, 2}));
  show("amin_keepdim", y.amin({1}, true));
  show("argmax", x.argmax());
  show("argmax_dim0", x.argmax(0));
  show("argmin_dim1_keepdim", x.argmin(1, true));
  show("argmax_ties_first", torch::tensor({1.0, 3.0, 3.0, 2.0}).argmax());
  show("max_long", torch::tensor({3, -7, 9}).max());

  show("var", x.var());
  show("var_biased", x.var(false));
  show("var_dim1", x.var({1}));
  show("var_dim0_biased_keepdim", x.var({0}, false, true));
  show("std", x.std());
  show("std_dim1", y.std({1}));
  show("std_dims", y.std(torch::IntArrayRef{0, 2}, false));
  show("var_single_element", torch::tensor({2.0}).var());
  // A bare int is a dim, not `unbiased` (libtorch has var(int)/std(int) overloads for this).
  show("var_int_dim", x.var(1));
  show("std_int_dim0", x.std(0));
  show("sum_int_dim", x.sum(1));
  show("mean_int_dim", x.mean(0));

  show("norm", x.norm());
  show("norm_1", x.norm(1));
  show("norm_3", x.norm(3));
  show("norm_inf", x.norm(compat::kInf));
  show("norm_dim1", x.norm(2, {1}));
  show("norm_1_dim0_keepdim", x.norm(1, {0}, true));
  show("logsumexp_dim1", x.logsumexp({1}));
  show("logsumexp_dims_keepdim", y.logsumexp(torch::IntArrayRef{0, 2}, true));
  show("logsumexp_large", torch::tensor({1000.0, 1000.0}).logsumexp({0}));
  show("logsumexp_neg_inf", torch::tensor({-compat::kInf, -compat::kInf}).logsumexp({0}));

  show("all", torch::tensor({true, true, false}).all());
  show("any", torch::tensor({false, false, true}).any());
  show("all_dim", (x > 0).all(1));
  show("any_dim_keepdim", (x > 5).any(0, true));
  show("all_float", x.all());
  show("any_empty", torch::zeros({0}).any());

  show("cumsum_dim0", x.cumsum(0));
  show("cumsum_dim1", x.cumsum(1));
  show("cumsum_negative_dim", y.cumsum(-2));
  show("cumsum_long", torch::tensor({1, 2, 3}).cumsum(0));
  show("cumsum_bool", torch::tensor({true, false, true}).cumsum(0));
  show("cumsum_dtype", torch::tensor({1, 2, 3}).cumsum(0, torch::kFloat));
  show("cumprod_dim1", x.cumprod(1));

  auto [sv, si] = x.sort(1);
  show("sort_values", sv);
  show("sort_indices", si);
  auto [sdv, sdi] = x.sort(0, true);
  show("sort_descending_values", sdv);
  show("sort_descending_indices", sdi);
  auto [s3v, s3i] = y.sort(-1);
  show("sort_3d_values", s3v);
  show("sort_3d_indices", s3i);
  show("argsort", y.argsort(1, false));
  show("argsort_descending", x.argsort(1, true));
  auto [tv, ti] = y.topk(2);
  show("topk_values", tv);
  show("topk_indices", ti);
  auto [t0v, t0i] = x.topk(1, 0);
  show("topk_dim0_values", t0v);
  show("topk_dim0_indices", t0i);
  auto [tsv, tsi] = x.topk(2, 1, false);
  show("topk_smallest_values", tsv);
  show("topk_smallest_indices", tsi);
  auto [nv, ni] = torch::tensor({2.0, compat::kNaN, 1.0}).sort();
  show("sort_nan_values", nv);
  show("sort_nan_indices", ni);
  return 0;
}
