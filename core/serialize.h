// Tensors and state dicts on disk, in the safetensors format (the Hugging Face format that
// PyTorch users load with safetensors.torch.load_file): files move between ember and PyTorch
// in both directions. Writes are atomic (core/atomic_file.h); reads validate the whole header
// before touching data.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ember/core/ordered_dict.h"
#include "ember/core/tensor.h"

namespace ember {

/// String metadata stored in the header's "__metadata__" object.
using SafetensorsMetadata = std::map<std::string, std::string>;

/// The bytes of a safetensors file holding `tensors` (in dict order, each contiguous and
/// little-endian) and `metadata`. Tensors on other devices are copied to the CPU first.
std::vector<uint8_t> serialize_safetensors(const OrderedDict<std::string, Tensor>& tensors,
                                           const SafetensorsMetadata& metadata = {});
/// Parses safetensors bytes into CPU tensors that own their memory, in header order.
/// `name` is the source named in error messages.
OrderedDict<std::string, Tensor> deserialize_safetensors(const uint8_t* data, size_t size,
                                                         const std::string& name = "<memory>");
OrderedDict<std::string, Tensor> deserialize_safetensors(const std::vector<uint8_t>& bytes,
                                                         const std::string& name = "<memory>");
/// The "__metadata__" of safetensors bytes (empty when there is none).
SafetensorsMetadata deserialize_safetensors_metadata(const std::vector<uint8_t>& bytes,
                                                     const std::string& name = "<memory>");

/// Writes `tensors` to `path` atomically (safetensors.torch.save_file).
void save_file(const OrderedDict<std::string, Tensor>& tensors, const std::string& path,
               const SafetensorsMetadata& metadata = {});
/// Reads every tensor of a safetensors file onto `device` (safetensors.torch.load_file's
/// device="cpu"): the bytes are read into CPU memory and copied to the device.
OrderedDict<std::string, Tensor> load_file(const std::string& path, Device device = kCPU);
/// As above, also returning the file's "__metadata__", read through the same open file: both
/// come from one version even while another process replaces the file (a checkpoint writer).
OrderedDict<std::string, Tensor> load_file(const std::string& path, Device device, SafetensorsMetadata& metadata);
/// Reads only a file's "__metadata__" strings.
SafetensorsMetadata load_file_metadata(const std::string& path);

// libtorch's spelling: torch::save(value, path) / torch::load(value, path, device).
// A single tensor is stored under the key "tensor"; a vector under "0", "1", ...
/// Saves one tensor as a safetensors file with the single key "tensor".
void save(const Tensor& tensor, const std::string& path);
/// Saves tensors under the keys "0", "1", ...
void save(const std::vector<Tensor>& tensors, const std::string& path);
/// Saves a dict of tensors under its keys (same as save_file without metadata).
void save(const OrderedDict<std::string, Tensor>& tensors, const std::string& path);
// `device` is libtorch's map location: where the loaded tensors go (the file records none, so
// the CPU by default).
/// Loads the tensor saved by save(Tensor): the key "tensor", or the only tensor of the file.
void load(Tensor& tensor, const std::string& path, Device device = kCPU);
/// Loads the tensors saved by save(vector): keys "0".."n-1" in order.
void load(std::vector<Tensor>& tensors, const std::string& path, Device device = kCPU);
/// Loads every tensor of the file, in header order (same as load_file).
void load(OrderedDict<std::string, Tensor>& tensors, const std::string& path, Device device = kCPU);

}  // namespace ember
