"""torch._dynamo.exc: the errors graph capture raises (pyctorch's torch.export raises UserError)."""
from enum import Enum

__all__ = ["TorchDynamoException", "UserError", "UserErrorType", "Unsupported", "InvalidBackend",
           "FailOnRecompileLimitHit"]


class TorchDynamoException(RuntimeError):
    pass


class Unsupported(TorchDynamoException):
    pass


class UserErrorType(Enum):
    DYNAMIC_CONTROL_FLOW = "DYNAMIC_CONTROL_FLOW"
    ANTI_PATTERN = "ANTI_PATTERN"
    STANDARD_LIBRARY = "STANDARD_LIBRARY"
    CONSTRAINT_VIOLATION = "CONSTRAINT_VIOLATION"
    DYNAMIC_DIM = "DYNAMIC_DIM"
    INVALID_INPUT = "INVALID_INPUT"
    INVALID_OUTPUT = "INVALID_OUTPUT"
    UNSUPPORTED_FEATURE = "UNSUPPORTED_FEATURE"


class UserError(Unsupported):
    """An error in what the user asked graph capture to do (torch._dynamo.exc.UserError)."""

    def __init__(self, error_type_or_msg, msg=None, case_name=None):
        if msg is None:
            error_type, msg = UserErrorType.CONSTRAINT_VIOLATION, error_type_or_msg
        else:
            error_type = error_type_or_msg
        super().__init__(msg)
        self.error_type = error_type
        self.message = msg


class InvalidBackend(TorchDynamoException):
    """torch.compile(backend=name) with a name no backend is registered under."""

    def __init__(self, name):
        super().__init__(f"Invalid backend: {name!r}, see `torch._dynamo.list_backends()` for available backends.")


class FailOnRecompileLimitHit(Exception):
    """config.fail_on_recompile_limit_hit is set and a function reached config.recompile_limit."""
