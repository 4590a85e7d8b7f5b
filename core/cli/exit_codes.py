"""The CLI's exit statuses, in one module both the entry point and the commands that
catch a stop themselves (bench) import."""

USAGE_ERROR = 2
INTERNAL_ERROR = 1
BROKEN_PIPE = 141  # 128 + SIGPIPE: what a shell reports for a tool stopped by `| head`
INTERRUPTED = 130  # 128 + SIGINT: Ctrl-C
TERMINATED = 143  # 128 + SIGTERM: scancel, docker stop, systemctl stop
