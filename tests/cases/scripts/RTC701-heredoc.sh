# expect: RTC701 3:5
export HCCL_IF_IP=10.0.0.6
cat <<EOT > /tmp/config.yaml
model: /models/m
EOT
vllm serve /models/m -tp 8
