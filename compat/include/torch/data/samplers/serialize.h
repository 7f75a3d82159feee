// <torch/data/samplers/serialize.h> for ember: archive << sampler / archive >> sampler.
// All of ember's API comes with it, as ember has one public header (compat/namespaces.h).
#pragma once

#include <torch/all.h>
