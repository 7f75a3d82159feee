// ember::backends flags: PyTorch's defaults, and assignment that reads back.
#include <doctest/doctest.h>

#include "ember/ember.h"

using namespace ember;

TEST_CASE("backends flags start at PyTorch's defaults and can be set") {
  CHECK_FALSE(static_cast<bool>(backends::cuda::matmul::allow_tf32));
  CHECK(static_cast<bool>(backends::cudnn::enabled));
  CHECK_FALSE(static_cast<bool>(backends::cudnn::benchmark));
  CHECK_FALSE(static_cast<bool>(backends::cudnn::deterministic));
  CHECK(static_cast<bool>(backends::cudnn::allow_tf32));

  backends::cudnn::benchmark = true;
  CHECK(static_cast<bool>(backends::cudnn::benchmark));
  backends::cudnn::benchmark = false;
  CHECK_FALSE(static_cast<bool>(backends::cudnn::benchmark));
}
