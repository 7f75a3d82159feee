// The Event records SummaryWriter writes, serialized with the protobuf classes generated from
// tensorboard_events.proto, each as PyTorch's torch.utils.tensorboard builds it. Only
// event_encoding.cpp sees protobuf; without protobuf, no_tensorboard.cpp defines these
// functions to raise, and SummaryWriter's constructor raises before any of them is reached.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "ember/tools/tensorboard/histogram.h"

namespace ember::tensorboard::detail {

/// Whether ember was built with protobuf (these functions work) or not (they raise).
bool protobuf_available();
/// Raises ember::Error saying ember was built without protobuf; does nothing in builds with it.
void require_protobuf();

/// Every record carries wall_time and, when given, step (an absent step stays 0).
struct EventHeader {
  double wall_time = 0;
  std::optional<int64_t> step;
};

/// The record that opens a file: file_version "brain.Event:2".
std::string file_version_event(EventHeader header);
/// SessionLog START: TensorBoard discards the events at or after its step (purge_step).
std::string session_start_event(EventHeader header);
/// add_scalar: simple_value (float), or with new_style a rank-0 DT_FLOAT (DT_DOUBLE with
/// double_precision) TensorProto with plugin "scalars".
std::string scalar_event(EventHeader header, const std::string& tag, double value, bool new_style = false,
                         bool double_precision = false);
/// add_histogram: a HistogramProto.
std::string histogram_event(EventHeader header, const std::string& tag, const HistogramData& histogram);
/// add_text: tag + "/text_summary", a DT_STRING TensorProto of shape [1] holding the UTF-8
/// text, with plugin "text" (its content: TextPluginData{version 0}, which serializes empty).
std::string text_event(EventHeader header, const std::string& tag, const std::string& text);

}  // namespace ember::tensorboard::detail
