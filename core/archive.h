// OutputArchive / InputArchive: libtorch's torch::serialize archives, the named-tensor trees
// that samplers, stateful datasets and user classes save themselves into
// (`sampler.save(archive)`, `archive << dataset`, `torch::save(sampler, "sampler.pt")`).
//
// Note [Archives are safetensors]
// libtorch writes an archive as a TorchScript zip; ember writes the same tree as one
// safetensors file (core/serialize.h): a tensor written under "key" in a nested archive
// written under "sampler" is stored as "sampler.key". Numbers (write(key, IValue)) are 0-dim
// float64/int64/bool tensors, as libtorch's samplers store their indices. So an
// archive is readable from Python with safetensors.torch.load_file, and writes are atomic.
// libtorch's `.pt` archives do not load here (they hold TorchScript); the keys a libtorch
// class writes are the same.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ember/core/ivalue.h"
#include "ember/core/ordered_dict.h"
#include "ember/core/tensor.h"

namespace ember::serialize {

/// A tree of named tensors to be written to a file or stream (libtorch's OutputArchive).
class OutputArchive {
 public:
  OutputArchive();

  /// Stores `tensor` (a detached copy of its current values) under `key`. `is_buffer` is
  /// libtorch's flag for module buffers; the file does not distinguish them.
  void write(const std::string& key, const Tensor& tensor, bool is_buffer = false);
  /// Stores every entry of `nested_archive` under "key.<its key>".
  void write(const std::string& key, OutputArchive& nested_archive);
  /// Stores a value as libtorch's write(key, c10::IValue): a number as a 0-dim float64 / int64
  /// / bool tensor, a tensor as itself, an int list as a 1-d int64 tensor; a string is an error
  /// (safetensors holds tensors only).
  void write(const std::string& key, const IValue& value);

  /// Writes the archive to `filename` atomically (a safetensors file).
  void save_to(const std::string& filename) const;
  /// Writes the archive's bytes to `stream`.
  void save_to(std::ostream& stream) const;
  /// Hands the archive's bytes to `func` (data, size) -> bytes written, which must be all.
  void save_to(const std::function<size_t(const void*, size_t)>& func) const;

  /// The entries written so far, by their full keys.
  const OrderedDict<std::string, Tensor>& tensors() const { return *tensors_; }

 private:
  std::shared_ptr<OrderedDict<std::string, Tensor>> tensors_;
};

/// A tree of named tensors read from a file or stream (libtorch's InputArchive).
class InputArchive {
 public:
  InputArchive();

  /// Reads an archive that save_to wrote; tensors are placed on `device` (the CPU by default).
  void load_from(const std::string& filename, std::optional<Device> device = std::nullopt);
  void load_from(std::istream& stream, std::optional<Device> device = std::nullopt);
  void load_from(const char* data, size_t size, std::optional<Device> device = std::nullopt);

  /// Reads the tensor under `key` into `tensor`: a defined tensor of the same shape and dtype
  /// has the values copied in (it keeps its device and identity, with autograd off); any
  /// other is replaced by the stored tensor. False when there is no such key.
  bool try_read(const std::string& key, Tensor& tensor, bool is_buffer = false);
  /// As try_read; a missing key is libtorch's error "No such serialized tensor '<key>'".
  void read(const std::string& key, Tensor& tensor, bool is_buffer = false);
  /// The nested archive written under `key`; false when nothing was written there.
  bool try_read(const std::string& key, InputArchive& nested_archive);
  void read(const std::string& key, InputArchive& nested_archive);
  /// Reads a value written by write(key, IValue) (libtorch's read(key, c10::IValue&)): a 0-dim
  /// float64 / int64 / bool entry is a number, any other entry a Tensor.
  void read(const std::string& key, IValue& value);
  /// Reads a number written by OutputArchive::write(key, number).
  void read(const std::string& key, double& value);
  void read(const std::string& key, int64_t& value);
  void read(const std::string& key, bool& value);

  /// The keys directly in this archive (a nested archive's name once, not its entries).
  std::vector<std::string> keys() const;
  /// Every tensor entry of this archive and its nested ones, by key relative to this archive
  /// ("a.b" for the entry "b" of the nested archive "a"), in the order they were written.
  std::vector<std::string> tensor_keys() const;

 private:
  /// The stored tensor under this archive's prefix + key, or nullptr.
  const Tensor* find(const std::string& key) const;
  void set(OrderedDict<std::string, Tensor> tensors);

  std::shared_ptr<const OrderedDict<std::string, Tensor>> tensors_;
  std::string prefix_;  // "" at the root, "a.b." for a nested archive
};

}  // namespace ember::serialize

namespace ember {

/// libtorch's torch::save(value, path) for anything with `archive << value` (a sampler, a
/// stateful dataset): the archive written to `path` (Note [Archives are safetensors]).
template <class Value, class... SaveToArgs>
requires requires(serialize::OutputArchive& a, const Value& v) { a << v; }
void save(const Value& value, SaveToArgs&&... args) {
  serialize::OutputArchive archive;
  archive << value;
  archive.save_to(std::forward<SaveToArgs>(args)...);
}

/// libtorch's torch::load(value, path) for anything with `archive >> value`.
template <class Value, class... LoadFromArgs>
requires requires(serialize::InputArchive& a, Value& v) { a >> v; }
void load(Value& value, LoadFromArgs&&... args) {
  serialize::InputArchive archive;
  archive.load_from(std::forward<LoadFromArgs>(args)...);
  archive >> value;
}

}  // namespace ember
