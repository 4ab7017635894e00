"""`rc1 export --push-to-hub REPO`: the export directory uploaded to a Hugging Face hub repo with `huggingface_hub`
(`create_repo(exist_ok=True)`, then `upload_folder`), with the usual token (`HF_TOKEN`, or the one `hf auth login`
stored) and endpoint (`HF_ENDPOINT`). It runs after the export is whole and recorded, and after the log's lock is
given back: whatever happens to the upload, the local export and its model_exported event stand. Any failure
(no network, offline mode, a refused token, a repo that cannot be created) is one line, exit 1, never a traceback.
"""

from __future__ import annotations

from pathlib import Path

from rc1.core.errors import BadInput, PushFailed


def check_repo_id(repo: str) -> None:
    """A malformed repo id is refused before anything is exported (exit 2)."""
    from huggingface_hub.utils import HFValidationError, validate_repo_id

    try:
        validate_repo_id(repo)
    except HFValidationError as e:
        raise BadInput(f"--push-to-hub {repo!r}: not a hub repo id ({_first_line(e)}); e.g. my-org/my-model") from None


def push(folder: Path, repo: str, message: str, seq: int) -> str:
    """Upload `folder` to the model repo `repo` (created if missing); returns the commit's URL."""
    from huggingface_hub import HfApi, constants

    try:
        api = HfApi()
        api.create_repo(repo, repo_type="model", exist_ok=True)
        commit = api.upload_folder(repo_id=repo, repo_type="model", folder_path=str(folder), commit_message=message)
    except Exception as e:  # the boundary of a network call: every failure becomes one line
        raise PushFailed(
            f"--push-to-hub {repo}: {_why(e, constants.ENDPOINT)}; the export in {folder} and its "
            f"model_exported (seq {seq}) stand: push it later with `hf upload {repo} {folder}`"
        ) from e
    return str(commit.commit_url)


def _why(error: Exception, endpoint: str) -> str:
    from huggingface_hub.errors import HfHubHTTPError, LocalTokenNotFoundError, OfflineModeIsEnabled

    match error:
        case OfflineModeIsEnabled():
            return "the hub is switched off on this machine (HF_HUB_OFFLINE is set)"
        case LocalTokenNotFoundError():
            return "no Hugging Face token: set HF_TOKEN or run `hf auth login`"
        case HfHubHTTPError() if error.response is not None and error.response.status_code in (401, 403):
            return (
                f"{endpoint} refused the token (HTTP {error.response.status_code}): set HF_TOKEN, or run `hf auth "
                "login`, with a token that may write to this repo"
            )
        case HfHubHTTPError():
            return f"{endpoint} answered: {_first_line(error)}"
    return f"cannot reach {endpoint} ({type(error).__name__}: {_first_line(error)})"


def _first_line(error: Exception) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__
