"""An ordinary mpi4py program: every rank adds its rank + 1 with MPI_Allreduce.
Under Shoal, mpirun starts the ranks through Shoal's containers (one task per MPI host).

    python3 allreduce.py [--fail-rank R]   (rank R dies, exit code 3, before the allreduce)
"""
import argparse
import os

from mpi4py import MPI

parser = argparse.ArgumentParser()
parser.add_argument("--fail-rank", type=int, default=-1)
args = parser.parse_args()
comm = MPI.COMM_WORLD
if comm.Get_rank() == args.fail_rank:
    print(f"rank {comm.Get_rank()} dies on purpose", flush=True)
    os._exit(3)  # dies as a crash would: without MPI_Finalize
total = comm.allreduce(comm.Get_rank() + 1)
print(f"rank {comm.Get_rank()} of {comm.Get_size()} in task {os.environ.get('SHOAL_INDEX')}: sum {total}", flush=True)
