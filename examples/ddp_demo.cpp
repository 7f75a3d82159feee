// ddp_demo: the data-parallel example of docs/data_parallelism.md. Run it under the launcher:
//
//   build/ember-run --nproc-per-node 2 --standalone build/examples/ddp_demo
//
// Each worker joins the gloo process group from the environment ember-run sets, wraps the
// same small regression model in DistributedDataParallel (which broadcasts rank 0's weights),
// trains on its own slice of the batch, and prints its loss and a checksum of its weights:
// the checksums agree on every rank because backward averaged the gradients across ranks.
#include <cstdio>

#include <ember/dist/dist.h>
#include <ember/ember.h>

namespace torch = ember;
namespace dist = ember::dist;

int main() {
  dist::init_process_group("gloo");  // RANK, WORLD_SIZE, MASTER_ADDR/MASTER_PORT from ember-run
  torch::manual_seed(0);             // the same data on every rank
  torch::nn::Sequential model(torch::nn::Linear(8, 16), torch::nn::ReLU(), torch::nn::Linear(16, 1));
  dist::DistributedDataParallel ddp(model);
  torch::optim::SGD optimizer(ddp->parameters(), torch::optim::SGDOptions(0.1));

  torch::Tensor x = torch::randn({64, 8}), y = x.sum(1, true);
  const int64_t n = 64 / dist::get_world_size(), rank = dist::get_rank();
  torch::Tensor xs = x.narrow(0, rank * n, n), ys = y.narrow(0, rank * n, n);  // this rank's slice

  double first_loss = 0, loss_value = 0;
  for (int step = 0; step < 100; ++step) {
    optimizer.zero_grad();
    torch::Tensor loss = torch::mse_loss(ddp->forward(xs), ys);
    loss.backward();  // each bucket's allreduce starts as soon as its gradients are ready
    optimizer.step();
    loss_value = loss.item<double>();
    if (step == 0) first_loss = loss_value;
  }
  double checksum = 0;
  for (const torch::Tensor& p : model->parameters()) checksum += p.sum().item<double>();
  std::printf("rank %lld: loss %.6f -> %.6f, weights checksum %.9g\n", static_cast<long long>(rank),
              first_loss, loss_value, checksum);
  dist::destroy_process_group();
}
