// <torch/torch.h> for ember: what libtorch programs include first. An unmodified libtorch
// program builds against ember with it (the namespaces: compat/namespaces.h; the CMake
// package: find_package(Torch), docs/cmake.md).
#pragma once

#include <torch/all.h>
