"""Document contents in S3 (any S3 API: AWS, SeaweedFS, …), one object per content address.

``s3://bucket/prefix`` names where; endpoint, region and credentials come from the usual AWS settings
(``AWS_ENDPOINT_URL``, ``AWS_REGION``, ``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``, or a profile), read by
boto3 itself. Each collection has a folder of its own under the prefix (``<prefix>/<schema>/<digest>``), so
removing a document from one collection never deletes bytes another references. boto3 is imported on first use;
its failures become StoreUnavailable (unreachable) or StoreError.
"""

from __future__ import annotations

from typing import Any

from provgraph.errors import ConfigError, NotFound, StoreError, StoreUnavailable

__all__ = ["S3Blobs", "parse_s3_url"]


def parse_s3_url(url: str) -> tuple[str, str]:
    """(bucket, prefix) of ``s3://bucket/prefix``; ConfigError for another form."""
    if not url.startswith("s3://") or not url[5:].split("/", 1)[0]:
        raise ConfigError(f"PROVGRAPH_BLOB_URL must be s3://bucket/prefix (or unset to keep documents in the store), "
                          f"got {url!r}")
    bucket, _, prefix = url[5:].partition("/")
    return bucket, prefix.strip("/")


class S3Blobs:
    """:class:`~provgraph.librarian.external.ExternalBlobs` in an S3 bucket, under ``prefix/folder``."""

    def __init__(self, url: str, folder: str) -> None:
        bucket, prefix = parse_s3_url(url)
        self.url = url
        self._bucket = bucket
        self._prefix = "/".join(p for p in (prefix, folder) if p) + "/"
        self._client: Any = None

    @property
    def client(self) -> Any:
        if self._client is None:
            try:
                import boto3
                from botocore.config import Config
            except ImportError as exc:
                raise StoreUnavailable("documents in S3 need boto3: pip install 'provgraph[scale]'") from exc
            self._client = boto3.client("s3", config=Config(retries={"max_attempts": 3, "mode": "standard"}))
        return self._client

    def key(self, digest: str) -> str:
        """The object key of ``digest``."""
        return self._prefix + digest

    def _call(self, doing: str, digest: str, fn: Any, **kw: Any) -> Any:
        from botocore.exceptions import BotoCoreError, ClientError, EndpointConnectionError

        try:
            return fn(Bucket=self._bucket, Key=self.key(digest), **kw)
        except EndpointConnectionError as exc:
            raise StoreUnavailable(f"document store {self.url}: cannot reach S3 ({doing}): {exc}") from exc
        except ClientError as exc:
            code = str(exc.response.get("Error", {}).get("Code", ""))
            if code in ("NoSuchKey", "404", "NotFound"):
                raise NotFound(f"document bytes {digest} are not in {self.url}") from exc
            raise StoreError(f"document store {self.url}: {doing} {digest}: {exc}") from exc
        except BotoCoreError as exc:
            raise StoreUnavailable(f"document store {self.url}: {doing}: {exc}") from exc

    def put(self, digest: str, data: bytes) -> None:
        self._call("put", digest, self.client.put_object, Body=data)

    def get(self, digest: str) -> bytes:
        return bytes(self._call("get", digest, self.client.get_object)["Body"].read())

    def delete(self, digest: str) -> None:
        self._call("delete", digest, self.client.delete_object)

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None
