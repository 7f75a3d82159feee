// ember::nn: Module and its holders, the layers, functional forms, init, utils and module
// save/load — libtorch's torch/nn.h.
#pragma once

#include "ember/nn/cloneable.h"
#include "ember/nn/enums.h"
#include "ember/nn/functional.h"
#include "ember/nn/init.h"
#include "ember/nn/module.h"
#include "ember/nn/module_holder.h"
#include "ember/nn/modules/activation.h"
#include "ember/nn/modules/batchnorm.h"
#include "ember/nn/modules/container.h"
#include "ember/nn/modules/conv.h"
#include "ember/nn/modules/dropout.h"
#include "ember/nn/modules/embedding.h"
#include "ember/nn/modules/functional.h"
#include "ember/nn/modules/linear.h"
#include "ember/nn/modules/loss.h"
#include "ember/nn/modules/normalization.h"
#include "ember/nn/modules/pooling.h"
#include "ember/nn/modules/softmax.h"
#include "ember/nn/serialize.h"
#include "ember/nn/utils.h"
