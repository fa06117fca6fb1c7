# expect: RTC464 1:1
# A one-node GPU launch without --hardware: CUDA_VISIBLE_DEVICES and NCCL_SOCKET_IFNAME make
# it NVIDIA GPUs (generic-gpu, 8 GPUs as used; the NVLink-island rules are skipped), and
# `-dp 2 -tp 4` without --data-parallel-size-local runs both engines here: 8 GPUs, not RTC210.
export VLLM_HOST_IP=10.0.2.31
export NCCL_SOCKET_IFNAME=enp65s0
export GLOO_SOCKET_IFNAME=enp65s0
export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
vllm serve /models/m --port 8000 --data-parallel-size 2 --tensor-parallel-size 4
