// The enum-like option values of nn (kMean, kSum, kSame, kReflect, kFanIn, ...) as libtorch
// spells them: each is an empty type plus a constant, so options hold a std::variant of the
// allowed ones and a wrong value fails to compile instead of failing at run time.
#pragma once

#include <string>
#include <variant>

namespace ember {
namespace enumtype {

// One empty struct per value; `name` is PyTorch's Python spelling (used in messages and
// printing, e.g. "reduction=mean" / "padding_mode=zeros").
#define EMBER_ENUM_TYPE(Type, text) \
  struct Type {                     \
    static constexpr const char* name = text; \
  };
EMBER_ENUM_TYPE(kNone, "none")
EMBER_ENUM_TYPE(kMean, "mean")
EMBER_ENUM_TYPE(kSum, "sum")
EMBER_ENUM_TYPE(kMax, "max")
EMBER_ENUM_TYPE(kBatchMean, "batchmean")
EMBER_ENUM_TYPE(kSame, "same")
EMBER_ENUM_TYPE(kValid, "valid")
EMBER_ENUM_TYPE(kZeros, "zeros")
EMBER_ENUM_TYPE(kConstant, "constant")
EMBER_ENUM_TYPE(kReflect, "reflect")
EMBER_ENUM_TYPE(kReplicate, "replicate")
EMBER_ENUM_TYPE(kCircular, "circular")
EMBER_ENUM_TYPE(kNearest, "nearest")
EMBER_ENUM_TYPE(kLinear, "linear")
EMBER_ENUM_TYPE(kBilinear, "bilinear")
EMBER_ENUM_TYPE(kBicubic, "bicubic")
EMBER_ENUM_TYPE(kTrilinear, "trilinear")
EMBER_ENUM_TYPE(kArea, "area")
EMBER_ENUM_TYPE(kBorder, "border")
EMBER_ENUM_TYPE(kReflection, "reflection")
EMBER_ENUM_TYPE(kNearestExact, "nearest-exact")
EMBER_ENUM_TYPE(kFanIn, "fan_in")
EMBER_ENUM_TYPE(kFanOut, "fan_out")
EMBER_ENUM_TYPE(kConv1D, "conv1d")
EMBER_ENUM_TYPE(kConv2D, "conv2d")
EMBER_ENUM_TYPE(kConv3D, "conv3d")
EMBER_ENUM_TYPE(kConvTranspose1D, "conv_transpose1d")
EMBER_ENUM_TYPE(kConvTranspose2D, "conv_transpose2d")
EMBER_ENUM_TYPE(kConvTranspose3D, "conv_transpose3d")
EMBER_ENUM_TYPE(kSigmoid, "sigmoid")
EMBER_ENUM_TYPE(kTanh, "tanh")
EMBER_ENUM_TYPE(kReLU, "relu")
EMBER_ENUM_TYPE(kLeakyReLU, "leaky_relu")
EMBER_ENUM_TYPE(kGELU, "gelu")
EMBER_ENUM_TYPE(kSELU, "selu")
#undef EMBER_ENUM_TYPE

}  // namespace enumtype

inline constexpr enumtype::kNone kNone{};
inline constexpr enumtype::kMean kMean{};
inline constexpr enumtype::kSum kSum{};
inline constexpr enumtype::kMax kMax{};
inline constexpr enumtype::kBatchMean kBatchMean{};
inline constexpr enumtype::kSame kSame{};
inline constexpr enumtype::kValid kValid{};
inline constexpr enumtype::kZeros kZeros{};
inline constexpr enumtype::kConstant kConstant{};
inline constexpr enumtype::kReflect kReflect{};
inline constexpr enumtype::kReplicate kReplicate{};
inline constexpr enumtype::kCircular kCircular{};
inline constexpr enumtype::kNearest kNearest{};
inline constexpr enumtype::kLinear kLinear{};
inline constexpr enumtype::kBilinear kBilinear{};
inline constexpr enumtype::kBicubic kBicubic{};
inline constexpr enumtype::kTrilinear kTrilinear{};
inline constexpr enumtype::kArea kArea{};
inline constexpr enumtype::kBorder kBorder{};
inline constexpr enumtype::kReflection kReflection{};
inline constexpr enumtype::kNearestExact kNearestExact{};
inline constexpr enumtype::kFanIn kFanIn{};
inline constexpr enumtype::kFanOut kFanOut{};
inline constexpr enumtype::kConv1D kConv1D{};
inline constexpr enumtype::kConv2D kConv2D{};
inline constexpr enumtype::kConv3D kConv3D{};
inline constexpr enumtype::kConvTranspose1D kConvTranspose1D{};
inline constexpr enumtype::kConvTranspose2D kConvTranspose2D{};
inline constexpr enumtype::kConvTranspose3D kConvTranspose3D{};
inline constexpr enumtype::kSigmoid kSigmoid{};
inline constexpr enumtype::kTanh kTanh{};
inline constexpr enumtype::kReLU kReLU{};
inline constexpr enumtype::kLeakyReLU kLeakyReLU{};
inline constexpr enumtype::kGELU kGELU{};
inline constexpr enumtype::kSELU kSELU{};

/// PyTorch's spelling of whichever value a variant holds ("mean", "reflect").
template <class... Ts>
std::string enum_name(const std::variant<Ts...>& v) {
  return std::visit([](const auto& e) { return std::string(std::decay_t<decltype(e)>::name); }, v);
}

/// Whether variant `v` holds enum value E: `holds<enumtype::kMean>(options.reduction())`.
template <class E, class... Ts>
bool holds(const std::variant<Ts...>& v) {
  return std::holds_alternative<E>(v);
}

}  // namespace ember
