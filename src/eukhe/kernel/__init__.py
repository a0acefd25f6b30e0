"""The conversation's Python kernel, for the `ipython` tool: ipykernel started on first use in a session
of its own, one cell at a time, a cell blocking its call at most the blocking budget
(`toolBlockingBudgetMs`, `DEFAULT_BUDGET_MS` = 30 s when unset) and then going on as a detached job
the host keeps watching; output bounded to a head and a tail of HEAD and TAIL bytes; a `bash(cmd)`
helper in the kernel for background commands; `output_bytes()`, the progress a supervisor reads; and
`close()`, after which no process of the kernel is left.
"""

from eukhe.kernel._kernel import DEFAULT_BUDGET_MS, HEAD, TAIL, Kernel, strip_ansi

__all__ = [
    "DEFAULT_BUDGET_MS",
    "HEAD",
    "TAIL",
    "Kernel",
    "strip_ansi",
]
