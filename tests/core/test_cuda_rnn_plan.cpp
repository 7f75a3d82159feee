// How cuda/rnn.cpp hands PyTorch's RNN weights to cuDNN (cuda/rnn_plan.h), checked on the CPU:
// the flat weight list's order and shapes against the modules' own registration, each cuDNN
// gate matrix / bias against hand-worked blocks, the merging of copies and the coverage check
// that guards a layout cuDNN might change, and a pack / unpack round trip through a simulated
// weight space. Also _cudnn_rnn's refusals off CUDA. Runs in every build; no GPU involved.
#include <doctest/doctest.h>

#include <map>
#include <string>
#include <vector>

#include "ember/core/ops/cudnn_rnn.h"
#include "ember/cuda/rnn_plan.h"
#include "ember/ember.h"

using namespace ember;
using namespace ember::cuda;

namespace {

RnnShape lstm_shape(int64_t layers, bool bidirectional, bool bias, int64_t proj) {
  RnnShape s;
  s.cell = RnnCell::kLstm;
  s.input_size = 5;
  s.hidden_size = 6;
  s.proj_size = proj;
  s.num_layers = layers;
  s.bidirectional = bidirectional;
  s.bias = bias;
  return s;
}

/// The weight-space offsets a cuDNN-like layout gives: pseudo-layer by pseudo-layer, all gate
/// matrices by id, then the projection, then the biases by id, each followed by `gap` unused
/// elements (0: back to back, as cuDNN places them).
std::vector<RnnCopy> simulated_copies(const RnnShape& s, int64_t gap, int64_t* space_numel) {
  std::vector<RnnWeightPiece> pieces = rnn_weight_pieces(s);
  std::vector<RnnCopy> copies;
  int64_t offset = 0;
  for (int64_t pseudo = 0; pseudo < s.num_layers * s.directions(); ++pseudo)
    for (bool bias : {false, true})
      for (const RnnWeightPiece& p : pieces)
        if (p.pseudo_layer == pseudo && p.is_bias == bias) {
          copies.push_back({p.param, p.param_offset, offset, p.numel()});
          offset += p.numel() + gap;
        }
  *space_numel = offset;
  return copies;
}

/// Every parameter's shape by PyTorch's name, in registration order.
std::vector<std::pair<std::string, std::vector<int64_t>>> module_params(nn::Module& m) {
  std::vector<std::pair<std::string, std::vector<int64_t>>> out;
  for (const auto& p : m.named_parameters())
    out.push_back({p.key(), std::vector<int64_t>(p.value().sizes().begin(), p.value().sizes().end())});
  return out;
}

/// rnn_param_index / rnn_param_shape listed in index order.
std::vector<std::vector<int64_t>> plan_shapes(const RnnShape& s) {
  std::vector<std::vector<int64_t>> out(static_cast<size_t>(s.num_params()));
  for (int64_t layer = 0; layer < s.num_layers; ++layer)
    for (int64_t dir = 0; dir < s.directions(); ++dir)
      for (RnnParam p : {RnnParam::kWeightIh, RnnParam::kWeightHh, RnnParam::kBiasIh, RnnParam::kBiasHh,
                         RnnParam::kWeightHr}) {
        const int64_t i = rnn_param_index(s, layer, dir, p);
        if (i >= 0) out[static_cast<size_t>(i)] = rnn_param_shape(s, layer, p);
      }
  return out;
}

}  // namespace

TEST_CASE("cuda rnn plan: the flat weight list is the modules' parameters, in order and shape") {
  struct Case {
    RnnShape shape;
    std::shared_ptr<nn::Module> module;
  };
  RnnShape gru = lstm_shape(2, true, false, 0);
  gru.cell = RnnCell::kGru;
  RnnShape rnn = lstm_shape(3, false, true, 0);
  rnn.cell = RnnCell::kRnnRelu;
  std::vector<Case> cases = {
      {lstm_shape(2, true, true, 3),
       nn::LSTM(nn::LSTMOptions(5, 6).num_layers(2).bidirectional(true).proj_size(3)).ptr()},
      {lstm_shape(2, false, false, 4), nn::LSTM(nn::LSTMOptions(5, 6).num_layers(2).bias(false).proj_size(4)).ptr()},
      {gru, nn::GRU(nn::GRUOptions(5, 6).num_layers(2).bidirectional(true).bias(false)).ptr()},
      {rnn, nn::RNN(nn::RNNOptions(5, 6).num_layers(3).nonlinearity(kReLU)).ptr()},
  };
  for (Case& c : cases) {
    auto named = module_params(*c.module);
    auto planned = plan_shapes(c.shape);
    REQUIRE(named.size() == planned.size());
    for (size_t i = 0; i < named.size(); ++i) {
      INFO(named[i].first);
      CHECK(named[i].second == planned[i]);
    }
  }
  // Spot checks of the names behind the indices.
  auto named = module_params(*cases[0].module);
  RnnShape s = cases[0].shape;
  CHECK(named[static_cast<size_t>(rnn_param_index(s, 1, 1, RnnParam::kWeightHr))].first == "weight_hr_l1_reverse");
  CHECK(named[static_cast<size_t>(rnn_param_index(s, 1, 0, RnnParam::kBiasHh))].first == "bias_hh_l1");
  CHECK(rnn_param_index(cases[2].shape, 0, 0, RnnParam::kBiasIh) == -1);
  CHECK(rnn_param_index(cases[2].shape, 0, 0, RnnParam::kWeightHr) == -1);
}

TEST_CASE("cuda rnn plan: each cuDNN linear layer holds one gate block of PyTorch's parameter") {
  // LSTM 2 layers, bidirectional, proj 3: H = 6, P = 3, layer 1 input = 2 * 3 = 6.
  RnnShape s = lstm_shape(2, true, true, 3);
  std::vector<RnnWeightPiece> pieces = rnn_weight_pieces(s);
  // Per pseudo-layer: 8 matrices + 8 biases + the projection.
  CHECK(pieces.size() == 4u * 17u);
  std::map<std::tuple<int64_t, int64_t, bool>, RnnWeightPiece> by_id;
  for (const RnnWeightPiece& p : pieces) by_id[{p.pseudo_layer, p.lin_layer_id, p.is_bias}] = p;
  // Pseudo-layer 3 = layer 1, reverse; id 5 = the recurrent forget gate: rows 6..11 of
  // weight_hh_l1_reverse [24, 3], i.e. elements 18..35.
  RnnWeightPiece r = by_id.at({3, 5, false});
  CHECK(r.param == rnn_param_index(s, 1, 1, RnnParam::kWeightHh));
  CHECK(r.param_offset == 18);
  CHECK(r.rows == 6);
  CHECK(r.cols == 3);
  // id 2 (input cell gate g) of layer 1 forward: rows 12..17 of weight_ih_l1 [24, 6].
  RnnWeightPiece g = by_id.at({2, 2, false});
  CHECK(g.param == rnn_param_index(s, 1, 0, RnnParam::kWeightIh));
  CHECK(g.param_offset == 12 * 6);
  CHECK(g.numel() == 36);
  // Its bias: elements 12..17 of bias_ih_l1; the recurrent output gate's: 18..23 of bias_hh_l1.
  CHECK(by_id.at({2, 2, true}).param == rnn_param_index(s, 1, 0, RnnParam::kBiasIh));
  CHECK(by_id.at({2, 2, true}).param_offset == 12);
  CHECK(by_id.at({2, 7, true}).param == rnn_param_index(s, 1, 0, RnnParam::kBiasHh));
  CHECK(by_id.at({2, 7, true}).param_offset == 18);
  // id 8: the projection, the whole of weight_hr [3, 6], no bias.
  RnnWeightPiece proj = by_id.at({1, 8, false});
  CHECK(proj.param == rnn_param_index(s, 0, 1, RnnParam::kWeightHr));
  CHECK(proj.param_offset == 0);
  CHECK(proj.numel() == 18);
  CHECK(by_id.count({1, 8, true}) == 0);

  // GRU: ids 0-2 input r, z, n; 3-5 recurrent. id 4 = recurrent z: rows 6..11 of [18, 6].
  RnnShape gru = lstm_shape(1, false, true, 0);
  gru.cell = RnnCell::kGru;
  std::vector<RnnWeightPiece> gp = rnn_weight_pieces(gru);
  CHECK(gp.size() == 12u);
  for (const RnnWeightPiece& p : gp)
    if (p.lin_layer_id == 4 && !p.is_bias) {
      CHECK(p.param == 1);
      CHECK(p.param_offset == 36);
    }

  CHECK_THROWS_WITH_AS(check_rnn_piece(r, 17),
                       "cuDNN RNN weight layout: linear layer 5 of pseudo-layer 3 (matrix) holds 17 elements, "
                       "expected 18",
                       ember::Error);
  CHECK_NOTHROW(check_rnn_piece(r, 18));
}

TEST_CASE("cuda rnn plan: copies merge into one per parameter when cuDNN packs gates back to back") {
  for (bool bias : {true, false})
    for (int64_t proj : {0, 4}) {
      RnnShape s = lstm_shape(2, true, bias, proj);
      int64_t space = 0;
      std::vector<RnnCopy> merged = merge_rnn_copies(simulated_copies(s, 0, &space));
      CHECK(static_cast<int64_t>(merged.size()) == s.num_params());
      CHECK_NOTHROW(check_rnn_copies(s, merged, space));
      // With a gap after every block nothing merges, and the coverage still holds.
      std::vector<RnnCopy> gapped = merge_rnn_copies(simulated_copies(s, 2, &space));
      CHECK(gapped.size() == rnn_weight_pieces(s).size());
      CHECK_NOTHROW(check_rnn_copies(s, gapped, space));
    }
}

TEST_CASE("cuda rnn plan: the coverage check rejects a layout that would scramble the weights") {
  RnnShape s = lstm_shape(1, false, true, 0);
  int64_t space = 0;
  std::vector<RnnCopy> copies = merge_rnn_copies(simulated_copies(s, 1, &space));
  {
    std::vector<RnnCopy> missing = copies;
    missing.erase(missing.begin() + 1);  // a gate block of weight_ih never copied
    CHECK_THROWS_WITH_AS(check_rnn_copies(s, missing, space),
                         "cuDNN RNN weight layout: parameter 0 is not covered in order", ember::Error);
  }
  {
    std::vector<RnnCopy> last_short = copies;
    last_short.pop_back();  // bias_hh's last gate missing
    CHECK_THROWS_WITH_AS(check_rnn_copies(s, last_short, space),
                         "cuDNN RNN weight layout: parameter 3 has 24 elements, the weight space holds 18",
                         ember::Error);
  }
  CHECK_THROWS_WITH_AS(check_rnn_copies(s, copies, space - 2),
                       doctest::Contains("leaves the weight space of"), ember::Error);
}

TEST_CASE("cuda rnn plan: packing into a weight space and cutting its gradient back out round-trips") {
  // What cuda/rnn.cpp's pack_weights and core/ops/cudnn_rnn.cpp's weight_grads do, on the CPU:
  // every parameter's elements land at the copies' offsets and come back from them unchanged.
  for (RnnCell cell : {RnnCell::kRnnTanh, RnnCell::kLstm, RnnCell::kGru}) {
    RnnShape s = lstm_shape(2, true, true, cell == RnnCell::kLstm ? 2 : 0);
    s.cell = cell;
    int64_t space_numel = 0;
    std::vector<RnnCopy> copies = merge_rnn_copies(simulated_copies(s, 3, &space_numel));
    std::vector<std::vector<int64_t>> shapes = plan_shapes(s);
    TensorList params;
    for (size_t i = 0; i < shapes.size(); ++i) {
      ember::manual_seed(static_cast<uint64_t>(i));
      params.push_back(rand(shapes[i], kDouble));
    }
    Tensor space = full({space_numel}, -7.0, kDouble);
    for (const RnnCopy& c : copies)
      space.narrow(0, c.space_offset, c.numel).copy_(params[static_cast<size_t>(c.param)].view(-1).narrow(
          0, c.param_offset, c.numel));
    std::vector<TensorList> pieces(shapes.size());
    for (const RnnCopy& c : copies)
      pieces[static_cast<size_t>(c.param)].push_back(space.narrow(0, c.space_offset, c.numel));
    for (size_t i = 0; i < shapes.size(); ++i) {
      Tensor back = cat(pieces[i], 0).view(shapes[i]);
      CHECK(equal(back, params[i]));
    }
    // The gaps were never written: every parameter element went to its own place.
    CHECK(space.eq(-7.0).sum().item<int64_t>() == 3 * static_cast<int64_t>(rnn_weight_pieces(s).size()));
  }
}

TEST_CASE("_cudnn_rnn: CPU tensors never take it, and a direct call says why") {
  RnnShape s = lstm_shape(1, false, true, 0);
  s.cell = RnnCell::kGru;
  Tensor x = rand({4, 2, 5});
  TensorList w = {rand({18, 5}), rand({18, 6}), rand({18}), rand({18})};
  Tensor hx = zeros({1, 2, 6});
  CHECK_FALSE(_use_cudnn_rnn(s, x, w, hx, Tensor()));
  CHECK_THROWS_WITH_AS(_cudnn_rnn(x, w, hx, Tensor(), s), "_cudnn_rnn: expected CUDA tensors, got cpu",
                       ember::Error);
}
