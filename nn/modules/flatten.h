// Flatten and Unflatten live with the linear-family layers (as libtorch's linear.h); this
// header is the name the issue layout gives them.
#pragma once

#include "ember/nn/modules/linear.h"
