# expect: RTC703 1:1
export HCCL_IF_IP=10.0.0.6
export HCCL_BUFFSIZE=1024
