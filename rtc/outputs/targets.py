"""What ``rtc compile --target`` may write, and the container images of Kubernetes pods
(a module without imports: the CLI reads it for its --help text)."""

#: The container image of ``--target k8s`` pods unless ``--image`` names another:
#: vllm-ascend's published image (quay.io/ascend/vllm-ascend, its docs' `docker run` lines).
DEFAULT_IMAGE = "quay.io/ascend/vllm-ascend:latest"
#: The same on NVIDIA GPU hardware: vLLM's published image (docker.io/vllm/vllm-openai,
#: vLLM docs deployment/docker).
GPU_IMAGE = "vllm/vllm-openai:latest"
#: The targets: shell (env files and scripts), k8s (LeaderWorkerSets, rank table
#: ConfigMaps, a preflight Job), slurm and ansible (shell plus sbatch scripts / playbooks).
TARGETS = ("shell", "k8s", "slurm", "ansible")
