"""The spec's error body, raised inside handlers and rendered by the app."""


class ApiError(Exception):
    """An answer with the spec's error body: `{error: {type, code, message, param}}`."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        type_: str = "invalid_request_error",
        code: str | None = None,
        param: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.body = {"error": {"type": type_, "code": code, "message": message, "param": param}}
        self.headers = headers or {}


def not_found(what: str) -> ApiError:
    return ApiError(404, f"No such {what}.", code="resource_missing")


def bad_param(param: str, message: str) -> ApiError:
    return ApiError(400, message, code="parameter_invalid", param=param)
