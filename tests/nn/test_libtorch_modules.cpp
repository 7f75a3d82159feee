// libtorch's nn modules that ember provides, checked at compile time: each name has its Impl
// class (an nn::Module) and its holder (an nn::ModuleHolder of that Impl). A module listed
// here that does not exist fails the build. scripts/nn_modules_status.py reads this list to
// write docs/nn_modules.md (libtorch 1.13's 129 modules with ember's status).
#include <algorithm>
#include <string>
#include <type_traits>
#include <vector>

#include "doctest/doctest.h"
#include "ember/nn/nn.h"

// Sorted, one X(Name) per module; the blank line after the list ends it for the script.
#define EMBER_LIBTORCH_MODULES(X) \
  X(AdaptiveAvgPool1d) X(AdaptiveAvgPool2d) X(AdaptiveAvgPool3d) X(AdaptiveLogSoftmaxWithLoss) \
  X(AdaptiveMaxPool1d) X(AdaptiveMaxPool2d) X(AdaptiveMaxPool3d) X(AlphaDropout) X(AvgPool1d) \
  X(AvgPool2d) X(AvgPool3d) X(BCELoss) X(BCEWithLogitsLoss) X(BatchNorm1d) X(BatchNorm2d) \
  X(BatchNorm3d) X(Bilinear) X(CELU) X(CTCLoss) X(ConstantPad1d) X(ConstantPad2d) \
  X(ConstantPad3d) X(Conv1d) X(Conv2d) X(Conv3d) X(ConvTranspose1d) X(ConvTranspose2d) \
  X(ConvTranspose3d) X(CosineEmbeddingLoss) X(CosineSimilarity) X(CrossEntropyLoss) \
  X(CrossMapLRN2d) X(Dropout) X(Dropout2d) X(Dropout3d) X(ELU) X(Embedding) X(EmbeddingBag) \
  X(FeatureAlphaDropout) X(Flatten) X(Fold) X(FractionalMaxPool2d) X(FractionalMaxPool3d) \
  X(Functional) X(GELU) X(GLU) X(GRU) X(GRUCell) X(GroupNorm) X(Hardshrink) X(Hardtanh) \
  X(HingeEmbeddingLoss) X(HuberLoss) X(Identity) X(InstanceNorm1d) X(InstanceNorm2d) \
  X(InstanceNorm3d) X(KLDivLoss) X(L1Loss) X(LPPool1d) X(LPPool2d) X(LSTM) X(LSTMCell) \
  X(LayerNorm) X(LeakyReLU) X(Linear) X(LocalResponseNorm) X(LogSigmoid) X(LogSoftmax) X(MSELoss) \
  X(MarginRankingLoss) X(MaxPool1d) X(MaxPool2d) X(MaxPool3d) X(MaxUnpool1d) X(MaxUnpool2d) \
  X(MaxUnpool3d) X(Mish) X(ModuleDict) X(ModuleList) X(MultiLabelMarginLoss) \
  X(MultiLabelSoftMarginLoss) X(MultiMarginLoss) X(MultiheadAttention) X(NLLLoss) X(PReLU) \
  X(PairwiseDistance) X(ParameterDict) X(ParameterList) X(PixelShuffle) X(PixelUnshuffle) \
  X(PoissonNLLLoss) X(RNN) X(RNNCell) X(RReLU) X(ReLU) X(ReLU6) X(ReflectionPad1d) \
  X(ReflectionPad2d) X(ReflectionPad3d) X(ReplicationPad1d) X(ReplicationPad2d) \
  X(ReplicationPad3d) X(SELU) X(Sequential) X(SiLU) X(Sigmoid) X(SmoothL1Loss) X(SoftMarginLoss) \
  X(Softmax) X(Softmax2d) X(Softmin) X(Softplus) X(Softshrink) X(Softsign) X(Tanh) X(Tanhshrink) \
  X(Threshold) X(Transformer) X(TransformerDecoder) X(TransformerDecoderLayer) \
  X(TransformerEncoder) X(TransformerEncoderLayer) X(TripletMarginLoss) \
  X(TripletMarginWithDistanceLoss) X(Unflatten) X(Unfold) X(Upsample) X(ZeroPad2d) \
  /* end */

namespace {

#define EMBER_CHECK_MODULE(Name)                                                                  \
  static_assert(std::is_base_of_v<ember::nn::Module, ember::nn::Name##Impl>, #Name "Impl is not a Module"); \
  static_assert(std::is_base_of_v<ember::nn::ModuleHolder<ember::nn::Name##Impl>, ember::nn::Name>,         \
                #Name " is not the holder of " #Name "Impl");
EMBER_LIBTORCH_MODULES(EMBER_CHECK_MODULE)
#undef EMBER_CHECK_MODULE

}  // namespace

TEST_CASE("test_libtorch_modules: the list is sorted and names each module once") {
#define EMBER_MODULE_NAME(Name) #Name,
  const std::vector<std::string> names = {EMBER_LIBTORCH_MODULES(EMBER_MODULE_NAME)};
#undef EMBER_MODULE_NAME
  CHECK(std::is_sorted(names.begin(), names.end()));
  CHECK(std::adjacent_find(names.begin(), names.end()) == names.end());
}
