"""A training run whose loop is a framework's own: PyTorch Lightning's
Trainer.fit on a model no one here wrote, for the GPU suite's native-mode
checks (check_native.py).

  trainer_loop.py [--steps N] [--batch B] [--model NAME]

timm's NAME (default resnet18; vit_tiny_patch16_224 works too) with 10
classes and random weights, AdamW, trained by Trainer.fit for N optimizer
steps (default 8) on one GPU, on an in-memory dataset of N x B random
224 x 224 images (B default 32): no validation, no logger, no checkpoint,
no progress bar, seed 0. Lightning runs the forward and the backward inside
optimizer.step (its closure) and moves the model back to the CPU after fit,
which a hand-written loop does not. After fit, prints one line:
  GPUPROF_TORCH model=lightning-NAME steps=N max_allocated=.. max_reserved=.. backend=..
(torch.cuda.max_memory_allocated(), max_memory_reserved(), the allocator
backend). Exit 1 when fit ran another number of steps than N."""
import argparse
import sys
import tempfile

import timm
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

try:
    import lightning.pytorch as pl
except ImportError:
    import pytorch_lightning as pl


class Classifier(pl.LightningModule):
    def __init__(self, net, lr):
        super().__init__()
        self.net = net
        self.lr = lr
        self.loss = nn.CrossEntropyLoss()

    def training_step(self, batch, batch_idx):
        x, y = batch
        return self.loss(self.net(x), y)

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=self.lr)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=8)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--model", default="resnet18", help="a timm model name")
    args = ap.parse_args()
    if args.steps < 1 or args.batch < 1:
        ap.error("--steps and --batch must be at least 1")
    if not torch.cuda.is_available():
        sys.exit("trainer_loop.py needs a CUDA device")
    pl.seed_everything(0)
    net = timm.create_model(args.model, pretrained=False, num_classes=10)
    # exactly one epoch of `steps` batches: fit stops at max_steps either way
    gen = torch.Generator().manual_seed(0)
    n = args.steps * args.batch
    data = TensorDataset(torch.randn(n, 3, 224, 224, generator=gen),
                         torch.randint(0, 10, (n,), generator=gen))
    loader = DataLoader(data, batch_size=args.batch, shuffle=False, num_workers=0)
    with tempfile.TemporaryDirectory(prefix="trainer_loop.") as root:
        trainer = pl.Trainer(accelerator="gpu", devices=1, max_steps=args.steps, max_epochs=1,
                             logger=False, enable_checkpointing=False, enable_progress_bar=False,
                             enable_model_summary=False, num_sanity_val_steps=0,
                             limit_val_batches=0, default_root_dir=root)
        trainer.fit(Classifier(net, 1e-3), train_dataloaders=loader)
    torch.cuda.synchronize()
    print(f"GPUPROF_TORCH model=lightning-{args.model} steps={trainer.global_step} "
          f"max_allocated={torch.cuda.max_memory_allocated()} "
          f"max_reserved={torch.cuda.max_memory_reserved()} "
          f"backend={torch.cuda.memory.get_allocator_backend()}", flush=True)
    if trainer.global_step != args.steps:
        sys.exit("fit ran %d steps, not %d" % (trainer.global_step, args.steps))


if __name__ == "__main__":
    main()
