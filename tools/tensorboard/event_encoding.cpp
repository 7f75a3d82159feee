// The Event records (event_encoding.h), built with the generated protobuf classes.
#include "ember/tools/tensorboard/event_encoding.h"

#include "tensorboard_events.pb.h"

namespace ember::tensorboard::detail {

namespace {

namespace pb = ::tensorboard;

pb::Event make_event(const EventHeader& header) {
  pb::Event event;
  event.set_wall_time(header.wall_time);
  if (header.step) event.set_step(*header.step);
  return event;
}

std::string serialize(const pb::Event& event) {
  std::string bytes;
  event.SerializeToString(&bytes);
  return bytes;
}

void set_plugin(pb::Summary::Value* value, const std::string& plugin_name) {
  value->mutable_metadata()->mutable_plugin_data()->set_plugin_name(plugin_name);
}

}  // namespace

bool protobuf_available() { return true; }
void require_protobuf() {}

std::string file_version_event(EventHeader header) {
  pb::Event event = make_event(header);
  event.set_file_version("brain.Event:2");
  return serialize(event);
}

std::string session_start_event(EventHeader header) {
  pb::Event event = make_event(header);
  event.mutable_session_log()->set_status(pb::SessionLog::START);
  return serialize(event);
}

std::string scalar_event(EventHeader header, const std::string& tag, double value, bool new_style,
                         bool double_precision) {
  pb::Event event = make_event(header);
  pb::Summary::Value* v = event.mutable_summary()->add_value();
  v->set_tag(tag);
  if (!new_style) {
    v->set_simple_value(static_cast<float>(value));
    return serialize(event);
  }
  pb::TensorProto* t = v->mutable_tensor();
  if (double_precision) {
    t->set_dtype(pb::DT_DOUBLE);
    t->add_double_val(value);
  } else {
    t->set_dtype(pb::DT_FLOAT);
    t->add_float_val(static_cast<float>(value));
  }
  set_plugin(v, "scalars");
  return serialize(event);
}

std::string histogram_event(EventHeader header, const std::string& tag, const HistogramData& h) {
  pb::Event event = make_event(header);
  pb::Summary::Value* v = event.mutable_summary()->add_value();
  v->set_tag(tag);
  pb::HistogramProto* histo = v->mutable_histo();
  histo->set_min(h.min);
  histo->set_max(h.max);
  histo->set_num(h.num);
  histo->set_sum(h.sum);
  histo->set_sum_squares(h.sum_squares);
  histo->mutable_bucket_limit()->Add(h.bucket_limit.begin(), h.bucket_limit.end());
  histo->mutable_bucket()->Add(h.bucket.begin(), h.bucket.end());
  return serialize(event);
}

std::string text_event(EventHeader header, const std::string& tag, const std::string& text) {
  pb::Event event = make_event(header);
  pb::Summary::Value* v = event.mutable_summary()->add_value();
  v->set_tag(tag + "/text_summary");
  set_plugin(v, "text");  // content stays empty: TextPluginData(version=0) serializes to no bytes
  pb::TensorProto* t = v->mutable_tensor();
  t->set_dtype(pb::DT_STRING);
  t->mutable_tensor_shape()->add_dim()->set_size(1);
  t->add_string_val(text);
  return serialize(event);
}

}  // namespace ember::tensorboard::detail
