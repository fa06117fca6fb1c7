# expect: none
# A Ray cluster with no model on it yet: ray start starts no model (no TP / device rules).
## atlas-01
export HCCL_IF_IP=10.0.0.5
export GLOO_SOCKET_IFNAME=eno0
export RAY_EXPERIMENTAL_NOSET_ASCEND_RT_VISIBLE_DEVICES=1
ray start --head --port 6379 --node-ip-address 10.0.0.5
## atlas-02
export HCCL_IF_IP=10.0.0.6
export GLOO_SOCKET_IFNAME=eno0
export RAY_EXPERIMENTAL_NOSET_ASCEND_RT_VISIBLE_DEVICES=1
ray start --address 10.0.0.5:6379 --node-ip-address 10.0.0.6 --block
