# expect: RTC721 5:37
export HCCL_IF_IP=10.0.0.5
export GLOO_SOCKET_IFNAME=eno0
vllm serve /models/m --port 8077 -tp 8 -pp 2 --nnodes 2 --node-rank 0 \
  --master-port 29600 --master-addr your_master_ip
