// The output schema of get_observations exactly as the contract page publishes it
// (ObservationDetailsOutput, with the later MemoryDetailOutput and SessionSummaryDetailOutput
// changes applied). It is advertised verbatim in tools/list so that an agent validating
// against the page sees the same schema; the zod schema in getObservations.ts enforces it.
export const observationDetailsOutputJsonSchema = {
  "$defs": {
    "CompressedObservationSourceOutput": {
      "additionalProperties": false,
      "properties": {
        "compressed_observation_id": {
          "format": "int64",
          "type": "integer"
        },
        "compression_session_id": {
          "type": "string"
        },
        "created_at_epoch": {
          "format": "int64",
          "type": "integer"
        },
        "source_created_at_epoch": {
          "format": "int64",
          "type": "integer"
        },
        "source_hash": {
          "type": "string"
        },
        "source_observation_id": {
          "format": "int64",
          "type": "integer"
        }
      },
      "required": [
        "compressed_observation_id",
        "source_observation_id",
        "source_hash",
        "source_created_at_epoch",
        "compression_session_id",
        "created_at_epoch"
      ],
      "type": "object"
    },
    "DetailOutput": {
      "anyOf": [
        {
          "$ref": "#/$defs/MemoryDetailOutput"
        },
        {
          "$ref": "#/$defs/ObservationDetailOutput"
        },
        {
          "$ref": "#/$defs/SessionSummaryDetailOutput"
        }
      ]
    },
    "MemoryDetailOutput": {
      "additionalProperties": false,
      "properties": {
        "branch": {
          "type": [
            "string",
            "null"
          ]
        },
        "classification": {
          "type": "string"
        },
        "classification_reason": {
          "type": "string"
        },
        "created_at_epoch": {
          "format": "int64",
          "type": "integer"
        },
        "current_context_eligible": {
          "type": "boolean"
        },
        "files": {
          "type": [
            "string",
            "null"
          ]
        },
        "id": {
          "format": "int64",
          "type": "integer"
        },
        "memory_type": {
          "type": "string"
        },
        "project": {
          "type": "string"
        },
        "scope": {
          "type": "string"
        },
        "session_id": {
          "type": [
            "string",
            "null"
          ]
        },
        "status": {
          "type": "string"
        },
        "temporal_facts": {
          "items": {
            "$ref": "#/$defs/MemoryTemporalFactOutput"
          },
          "type": [
            "array",
            "null"
          ]
        },
        "text": {
          "type": "string"
        },
        "title": {
          "type": "string"
        },
        "topic_key": {
          "type": [
            "string",
            "null"
          ]
        },
        "topic_trace": {
          "items": {
            "$ref": "#/$defs/TopicTraceOutput"
          },
          "type": [
            "array",
            "null"
          ]
        },
        "updated_at_epoch": {
          "format": "int64",
          "type": "integer"
        }
      },
      "required": [
        "id",
        "project",
        "title",
        "text",
        "memory_type",
        "created_at_epoch",
        "updated_at_epoch",
        "status",
        "scope",
        "classification",
        "classification_reason",
        "current_context_eligible"
      ],
      "type": "object"
    },
    "MemoryTemporalFactOutput": {
      "additionalProperties": false,
      "properties": {
        "confidence": {
          "format": "double",
          "type": "number"
        },
        "learned_at_epoch": {
          "format": "int64",
          "type": "integer"
        },
        "object": {
          "type": "string"
        },
        "predicate": {
          "type": "string"
        },
        "project": {
          "type": "string"
        },
        "status": {
          "type": "string"
        },
        "subject": {
          "type": "string"
        },
        "valid_from_epoch": {
          "format": "int64",
          "type": [
            "integer",
            "null"
          ]
        },
        "valid_to_epoch": {
          "format": "int64",
          "type": [
            "integer",
            "null"
          ]
        }
      },
      "required": [
        "project",
        "subject",
        "predicate",
        "object",
        "learned_at_epoch",
        "confidence",
        "status"
      ],
      "type": "object"
    },
    "ObservationDetailOutput": {
      "additionalProperties": false,
      "properties": {
        "branch": {
          "type": [
            "string",
            "null"
          ]
        },
        "commit_sha": {
          "type": [
            "string",
            "null"
          ]
        },
        "compressed_sources": {
          "items": {
            "$ref": "#/$defs/CompressedObservationSourceOutput"
          },
          "type": [
            "array",
            "null"
          ]
        },
        "concepts": {
          "type": [
            "string",
            "null"
          ]
        },
        "content_session_id": {
          "type": [
            "string",
            "null"
          ]
        },
        "created_at": {
          "type": "string"
        },
        "created_at_epoch": {
          "format": "int64",
          "type": "integer"
        },
        "discovery_tokens": {
          "format": "int64",
          "type": [
            "integer",
            "null"
          ]
        },
        "facts": {
          "type": [
            "string",
            "null"
          ]
        },
        "files_modified": {
          "type": [
            "string",
            "null"
          ]
        },
        "files_read": {
          "type": [
            "string",
            "null"
          ]
        },
        "id": {
          "format": "int64",
          "type": "integer"
        },
        "last_accessed_epoch": {
          "format": "int64",
          "type": [
            "integer",
            "null"
          ]
        },
        "memory_session_id": {
          "type": "string"
        },
        "narrative": {
          "type": [
            "string",
            "null"
          ]
        },
        "project": {
          "type": [
            "string",
            "null"
          ]
        },
        "status": {
          "type": "string"
        },
        "subtitle": {
          "type": [
            "string",
            "null"
          ]
        },
        "title": {
          "type": [
            "string",
            "null"
          ]
        },
        "type": {
          "type": "string"
        }
      },
      "required": [
        "id",
        "memory_session_id",
        "type",
        "created_at",
        "created_at_epoch",
        "status"
      ],
      "type": "object"
    },
    "SessionSummaryDetailOutput": {
      "additionalProperties": false,
      "properties": {
        "completed": {
          "type": [
            "string",
            "null"
          ]
        },
        "created_at": {
          "type": "string"
        },
        "created_at_epoch": {
          "format": "int64",
          "type": "integer"
        },
        "decisions": {
          "type": [
            "string",
            "null"
          ]
        },
        "id": {
          "format": "int64",
          "type": "integer"
        },
        "learned": {
          "type": [
            "string",
            "null"
          ]
        },
        "memory_session_id": {
          "type": "string"
        },
        "next_steps": {
          "type": [
            "string",
            "null"
          ]
        },
        "preferences": {
          "type": [
            "string",
            "null"
          ]
        },
        "project": {
          "type": [
            "string",
            "null"
          ]
        },
        "request": {
          "type": [
            "string",
            "null"
          ]
        }
      },
      "required": [
        "id",
        "memory_session_id",
        "created_at",
        "created_at_epoch"
      ],
      "type": "object"
    },
    "TopicTraceOutput": {
      "additionalProperties": false,
      "properties": {
        "covered_from_event_id": {
          "format": "int64",
          "type": "integer"
        },
        "covered_to_event_id": {
          "format": "int64",
          "type": "integer"
        },
        "created_at_epoch": {
          "format": "int64",
          "type": "integer"
        },
        "evidence_event_ids": {
          "items": {
            "format": "int64",
            "type": "integer"
          },
          "type": "array"
        },
        "files": {
          "items": {
            "type": "string"
          },
          "type": [
            "array",
            "null"
          ]
        },
        "id": {
          "format": "int64",
          "type": "integer"
        },
        "segment_index": {
          "format": "int64",
          "type": "integer"
        },
        "status": {
          "type": "string"
        },
        "summary": {
          "type": "string"
        },
        "title": {
          "type": "string"
        },
        "topic_key": {
          "type": "string"
        },
        "updated_at_epoch": {
          "format": "int64",
          "type": "integer"
        }
      },
      "required": [
        "id",
        "topic_key",
        "title",
        "summary",
        "status",
        "segment_index",
        "covered_from_event_id",
        "covered_to_event_id",
        "evidence_event_ids",
        "created_at_epoch",
        "updated_at_epoch"
      ],
      "type": "object"
    }
  },
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "additionalProperties": false,
  "properties": {
    "details": {
      "items": {
        "$ref": "#/$defs/DetailOutput"
      },
      "type": "array"
    }
  },
  "required": [
    "details"
  ],
  "title": "ObservationDetailsOutput",
  "type": "object"
} as const;
