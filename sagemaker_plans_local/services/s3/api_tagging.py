"""S3's bucket tagging: PutBucketTagging, GetBucketTagging, DeleteBucketTagging (rules in
``bucket_tags`` and docs/tags.md, "S3 bucket tags")."""

from __future__ import annotations

from sagemaker_plans_local.protocol.errors import ApiError
from sagemaker_plans_local.protocol.service import operation
from sagemaker_plans_local.protocol.xml_reader import MALFORMED_XML
from sagemaker_plans_local.services.s3.protocol import S3Protocol


class BucketTaggingApi(S3Protocol):
    """The bucket tagging operations of ``S3Api``."""

    @operation("PutBucketTagging")
    def put_bucket_tagging(self, region: str, params: dict) -> tuple[int, dict]:
        tag_set = (params.get("Tagging") or {}).get("TagSet")
        if tag_set is None or any("Key" not in tag or "Value" not in tag for tag in tag_set):
            raise ApiError("MalformedXML", MALFORMED_XML)
        self.objects.put_bucket_tags(params["Bucket"], [(tag["Key"], tag["Value"]) for tag in tag_set])
        return 204, {}  # S3 answers 204 No Content (its API reference's example)

    @operation("GetBucketTagging")
    def get_bucket_tagging(self, region: str, params: dict) -> dict:
        tags = self.objects.bucket_tags(params["Bucket"])
        return {"TagSet": [{"Key": key, "Value": value} for key, value in tags.items()]}

    @operation("DeleteBucketTagging")
    def delete_bucket_tagging(self, region: str, params: dict) -> dict:
        self.objects.delete_bucket_tags(params["Bucket"])
        return {}
