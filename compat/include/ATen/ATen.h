// <ATen/ATen.h> for ember: the tensor library under libtorch's `at` namespace. It includes
// <ember/ember.h>, ember's one public header (so nn, optim and data come along, a superset of
// ATen), plus every c10 drop-in header, as libtorch's ATen.h brings c10 in.
#pragma once

#include <ATen/Parallel.h>
#include <c10/core/Device.h>
#include <c10/core/DeviceType.h>
#include <c10/core/Scalar.h>
#include <c10/core/ScalarType.h>
#include <c10/core/TensorOptions.h>
#include <c10/macros/Macros.h>
#include <c10/util/ArrayRef.h>
#include <c10/util/BFloat16.h>
#include <c10/util/Exception.h>
#include <c10/util/Half.h>
#include <c10/util/Optional.h>
#include <c10/util/StringUtil.h>
#include <c10/util/irange.h>
#include <ember/compat/namespaces.h>
#include <ember/ember.h>
