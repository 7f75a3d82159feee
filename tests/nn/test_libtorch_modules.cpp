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
  X(AdaptiveAvgPool1d) X(AdaptiveAvgPool2d) X(AdaptiveMaxPool2d) X(AlphaDropout) X(AvgPool1d) \
  X(AvgPool2d) X(BCELoss) X(BCEWithLogitsLoss) X(BatchNorm1d) X(BatchNorm2d) X(BatchNorm3d) \
  X(Bilinear) X(Conv1d) X(Conv2d) X(ConvTranspose1d) X(ConvTranspose2d) X(CrossEntropyLoss) \
  X(Dropout) X(Dropout2d) X(Dropout3d) X(ELU) X(Embedding) X(EmbeddingBag) X(FeatureAlphaDropout) X(Flatten) \
  X(Functional) X(GELU) X(GRU) X(GRUCell) X(GroupNorm) X(HuberLoss) X(Identity) X(KLDivLoss) \
  X(L1Loss) X(LSTM) X(LSTMCell) X(LayerNorm) X(LeakyReLU) X(Linear) X(LogSoftmax) X(MSELoss) \
  X(MaxPool1d) X(MaxPool2d) X(ModuleDict) X(ModuleList) X(MultiheadAttention) X(NLLLoss) \
  X(ParameterDict) X(ParameterList) X(RNN) X(RNNCell) X(ReLU) X(Sequential) X(SiLU) X(Sigmoid) \
  X(SmoothL1Loss) X(Softmax) X(Tanh) X(Transformer) X(TransformerDecoder) \
  X(TransformerDecoderLayer) X(TransformerEncoder) X(TransformerEncoderLayer) X(Unflatten) \
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
