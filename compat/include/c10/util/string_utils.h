// <c10/util/string_utils.h> for ember: c10::guts::to_string (the spelling libtorch's optimizers
// use for their state keys, which ember's optimizer state map accepts).
#pragma once

#include <ember/compat/namespaces.h>
#include <ember/optim/optimizer.h>
