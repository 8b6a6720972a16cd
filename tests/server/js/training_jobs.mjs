// The AWS SDK for JavaScript v3 against a sagemaker-plans-local server: create, describe, list.
// Usage: node training_jobs.mjs ENDPOINT_URL JOB_NAME  (NODE_PATH: where @aws-sdk/client-sagemaker is)
import { createRequire } from "node:module";
import path from "node:path";

const require = createRequire(path.join(process.env.NODE_PATH, "noop.js"));
const {
  SageMakerClient,
  CreateTrainingJobCommand,
  DescribeTrainingJobCommand,
  ListTrainingJobsCommand,
} = require("@aws-sdk/client-sagemaker");

const [endpoint, name] = process.argv.slice(2);
const client = new SageMakerClient({
  endpoint,
  region: "us-east-1",
  credentials: { accessKeyId: "testing", secretAccessKey: "testing" },
  maxAttempts: 1,
});

await client.send(
  new CreateTrainingJobCommand({
    TrainingJobName: name,
    RoleArn: "arn:aws:iam::123456789012:role/SageMakerRole",
    AlgorithmSpecification: { TrainingImage: "image", TrainingInputMode: "File" },
    OutputDataConfig: { S3OutputPath: "s3://bucket/output" },
    ResourceConfig: { InstanceType: "ml.m5.xlarge", InstanceCount: 1, VolumeSizeInGB: 30 },
    StoppingCondition: { MaxRuntimeInSeconds: 3600 },
  }),
);
const described = await client.send(new DescribeTrainingJobCommand({ TrainingJobName: name }));
const listed = await client.send(new ListTrainingJobsCommand({}));
let missing;
try {
  await client.send(new DescribeTrainingJobCommand({ TrainingJobName: "no-such-job" }));
} catch (error) {
  missing = { name: error.name, status: error.$metadata.httpStatusCode };
}
console.log(
  JSON.stringify({
    status: described.TrainingJobStatus,
    arn: described.TrainingJobArn,
    created: described.CreationTime instanceof Date,
    names: listed.TrainingJobSummaries.map((job) => job.TrainingJobName),
    missing,
  }),
);
