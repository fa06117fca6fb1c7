# expect: RTC708 1:22
# A node script saved with Windows line endings: bash reads `8000\r`.
export HCCL_IF_IP=10.0.0.6
export GLOO_SOCKET_IFNAME=eno0
export HCCL_SOCKET_IFNAME=eno0
vllm serve /models/m --tensor-parallel-size 8 --port 8000
