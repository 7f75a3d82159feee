// MNIST (and Fashion-MNIST, same IDX format): the four idx files of a directory, plain or
// gzip-compressed, as libtorch's datasets::MNIST. Images are float32 (N, 1, 28, 28) in [0, 1],
// targets int64 class labels.
#pragma once

#include <string>

#include "ember/core/tensor.h"
#include "ember/data/datasets/base.h"

namespace ember::data::datasets {

class MNIST : public Dataset<MNIST> {
 public:
  /// Which half of the dataset to read: train (60000) or test (10000) for MNIST.
  enum class Mode { kTrain, kTest };

  /// Reads `root`/{train,t10k}-{images-idx3,labels-idx1}-ubyte, each plain or with ".gz".
  /// Throws ember::Error naming the file when one is missing, corrupt or truncated.
  explicit MNIST(const std::string& root, Mode mode = Mode::kTrain);

  /// The image (1, 28, 28) and its label (a 0-dim int64 tensor).
  Example<> get(size_t index) override;
  std::optional<size_t> size() const override;
  /// The examples at `indices` stacked (the fast path of .map(Stack<>())).
  Example<> get_batch_stacked(ArrayRef<size_t> indices) const;
  bool is_train() const noexcept { return mode_ == Mode::kTrain; }
  /// All images (N, 1, 28, 28), float32.
  const Tensor& images() const { return images_; }
  /// All labels (N), int64.
  const Tensor& targets() const { return targets_; }

 private:
  Mode mode_;
  Tensor images_, targets_;
};

namespace detail {
/// Reads an IDX image file (magic 2051) into float32 (N, 1, rows, cols) scaled to [0, 1].
Tensor read_idx_images(const std::string& path);
/// Reads an IDX label file (magic 2049) into int64 (N); labels must be below `num_classes`.
Tensor read_idx_labels(const std::string& path, int64_t num_classes = 10);
}  // namespace detail

}  // namespace ember::data::datasets
