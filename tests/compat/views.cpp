// Views: view/reshape/permute/transpose/narrow/select/index with Slice/None/Ellipsis share
// storage with their base, so writing through a view changes the base.
#include "compat.h"

using compat::show;
using compat::show_flag;
using compat::show_int;
using compat::show_ints;
using torch::indexing::Ellipsis;
using torch::indexing::None;
using torch::indexing::Slice;

int main() {
  auto base = torch::arange(12, torch::kFloat).reshape({3, 4});
  show("view", base.view({4, 3}));
  show("view_inferred", base.view({-1, 6}));
  show("view_0dim", torch::tensor({5.0}).view(std::vector<int64_t>{}));
  show("reshape", base.reshape({2, -1}));
  show("reshape_3d", base.reshape({2, 3, 2}));
  show("permute", base.reshape({2, 3, 2}).permute({2, 0, 1}));
  show("permute_negative", base.reshape({2, 3, 2}).permute({-1, -3, -2}));
  show("transpose", base.transpose(0, 1));
  show("transpose_negative", base.reshape({2, 3, 2}).transpose(-1, 0));
  show("t", base.t());
  show("flatten", base.reshape({2, 3, 2}).flatten(1));
  show("unsqueeze", base.unsqueeze(1));
  show("squeeze", torch::zeros({1, 3, 1}).squeeze());
  show("squeeze_dim", torch::zeros({1, 3, 1}).squeeze(-1));
  show("expand", torch::tensor({1.0, 2.0}).expand({3, 2}));
  show("expand_keep", torch::tensor({{1.0}, {2.0}}).expand({-1, 3}));
  show("narrow", base.narrow(1, 1, 2));
  show("narrow_negative_dim", base.narrow(-2, 1, 2));
  show("select", base.select(0, 1));
  show("select_negative", base.select(1, -1));
  show("operator_brackets", base[2]);
  show("diagonal", base.diagonal());
  show("diagonal_offset", base.diagonal(1));
  show("unfold", torch::arange(6, torch::kFloat).unfold(0, 2, 2));
  show("as_strided", base.as_strided({2, 2}, {1, 4}, 1));
  show("movedim", base.reshape({2, 3, 2}).movedim(0, 2));

  show("index_int", base.index({1}));
  show("index_slice", base.index({Slice(), Slice(1, 3)}));
  show("index_step", base.index({Slice({}, {}, 2), Slice(1, {}, 2)}));
  show("index_negative", base.index({-1, Slice(-2)}));
  show("index_clamped_slice", base.index({Slice(1, 100), Slice(-100, 2)}));
  show("index_none", base.index({None, 0}));
  show("index_none_middle", base.index({Slice(), None, 1}));
  show("index_ellipsis", base.index({Ellipsis, 1}));
  show("index_ellipsis_string", base.index({"...", None}));
  show("index_ellipsis_3d", base.reshape({2, 3, 2}).index({0, Ellipsis, 1}));
  show("index_tensor", base.index({torch::tensor({0, 2})}));
  show("index_tensor_dim1", base.index({Slice(), torch::tensor({3, 0, 3})}));
  show("index_two_tensors", base.index({torch::tensor({0, 2}), torch::tensor({1, 3})}));
  show("index_mask", base.index({base > 5}));
  show("index_row_mask", base.index({torch::tensor({true, false, true})}));
  show("index_empty_slice", base.index({Slice(2, 1)}));

  // Metadata of views.
  show_ints("strides_t", base.t().strides());
  show_ints("strides_permute", base.reshape({2, 3, 2}).permute({2, 0, 1}).strides());
  show_ints("strides_expand", torch::tensor({1.0, 2.0}).expand({3, 2}).strides());
  show_ints("strides_step", base.index({Slice({}, {}, 2), Slice(1, {}, 2)}).strides());
  show_int("offset_narrow", base.narrow(1, 1, 2).storage_offset());
  show_int("offset_select", base.select(0, 2).storage_offset());
  show_flag("t_contiguous", base.t().is_contiguous());
  show_flag("t_t_contiguous", base.t().t().is_contiguous());
  show_flag("narrow_rows_contiguous", base.narrow(0, 1, 2).is_contiguous());
  show_flag("narrow_cols_contiguous", base.narrow(1, 1, 2).is_contiguous());
  show_flag("reshape_t_is_view", base.t().reshape({12}).is_alias_of(base));
  show_flag("reshape_is_view", base.reshape({4, 3}).is_alias_of(base));
  show_flag("contiguous_of_t_is_view", base.t().contiguous().is_alias_of(base));
  show("reshape_of_t", base.t().reshape({12}));
  show("contiguous_of_t", base.t().contiguous());
  show("chunk_1", base.chunk(2, 1)[1]);
  show("split_last", base.split(2, 0)[1]);
  show("unbind_1", base.unbind(1)[3]);

  // Writing through views changes the base.
  auto b = torch::zeros({3, 4});
  b.select(0, 1).fill_(5);
  show("after_select_fill", b);
  b.narrow(1, 2, 1).add_(1);
  show("after_narrow_add", b);
  b.t()[0].copy_(torch::tensor({7.0, 8.0, 9.0}));
  show("after_t_copy", b);
  b.view({12})[11].fill_(-1);
  show("after_view_fill", b);
  b.index({Slice(), Slice(1, {}, 2)}).mul_(2);
  show("after_step_mul", b);
  b.index_put_({0, Slice(1, 3)}, 4);
  show("after_index_put_scalar", b);
  b.index_put_({Ellipsis, 0}, torch::tensor({-1.0, -2.0, -3.0}));
  show("after_index_put_tensor", b);
  b.index_put_({b > 6}, 0);
  show("after_index_put_mask", b);
  b.diagonal().zero_();
  show("after_diagonal_zero", b);
  auto c = b.t().contiguous();
  c.fill_(100);
  show("contiguous_copy_is_separate", b);
  auto e = b.expand({2, 3, 4});
  show("expand_sees_base", e.select(0, 1));
  auto u = torch::arange(6, torch::kDouble);
  u.unsqueeze(0).squeeze(0).index({Slice(4)}).neg_();
  show("after_unsqueeze_squeeze_neg", u);
  return 0;
}
