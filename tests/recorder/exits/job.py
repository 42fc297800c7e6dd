"""The six steps of job_steps.c in Python, ended by os._exit(3), as a
multiprocessing worker or a launcher ends (test_exits.py).

python3 job.py JOB_LIBRARY RECORDER"""
import ctypes
import os
import sys
import time

job = ctypes.CDLL(sys.argv[1])
if job.job_start(sys.argv[2].encode()) != 0:
    sys.exit(2)
for n in range(1, 7):
    job.job_step(n)
    time.sleep(0.02)
os._exit(3)
