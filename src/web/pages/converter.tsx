import type { AccountSummary } from '../../account';
import { dailyLimitMessage } from '../../middleware/user-gate';
import { groupedDigits } from '../../plans';
import { Field, hintId, Layout, type PageFrame } from '../layout';

function QuotaLine({ quota }: { quota: AccountSummary['quota'] }) {
  return (
    <>
      <p class="hint">
        {quota.is_unlimited ? (
          'Unlimited conversions on your plan.'
        ) : (
          <>
            <span id="quota-remaining">{quota.daily_remaining}</span> of {quota.daily_max} conversions left today (shared with your API keys).
          </>
        )}{' '}
        Files up to {quota.max_file_size_mb} MB ({groupedDigits(quota.max_file_size_bytes)} bytes).
      </p>
      {quota.daily_max === null ? null : (
        // A status, not an alert: it is news when it appears after a conversion, not an error of that conversion.
        <p id="quota-exhausted" class="notice error" role="status" hidden={quota.daily_remaining !== 0}>
          {dailyLimitMessage(quota.daily_max)}
        </p>
      )}
    </>
  );
}

/** A labelled input of a step (no name: the page sends the steps as one JSON field). */
function StepInput({ label, field, min, max }: { label: string; field: string; min: number; max?: number }) {
  return (
    <label class="field">
      <span class="label">{label}</span>
      <input type="number" data-field={field} min={min} max={max} step={1} inputmode="numeric" />
    </label>
  );
}

/**
 * Several steps in one request (POST /app/v1/transform): each added step is a copy of its
 * template, its fields read into the `steps` JSON when the form is sent (converter.js).
 */
function StepsFieldset() {
  return (
    <fieldset data-operation="transform" hidden>
      <legend>Steps, in order: each works on the picture the steps before it leave</legend>
      <ol id="steps" class="steps" aria-live="polite" />
      <p id="steps-size" class="hint" role="status">
        No steps yet: add a crop, a resize, a rotation or a flip.
      </p>
      <div class="row step-buttons">
        <button type="button" class="secondary" data-add-step="crop">
          Add crop
        </button>
        <button type="button" class="secondary" data-add-step="resize">
          Add resize
        </button>
        <button type="button" class="secondary" data-add-step="rotate">
          Add rotate
        </button>
        <button type="button" class="secondary" data-add-step="flip">
          Add flip
        </button>
      </div>
      <template id="step-crop">
        <li class="step" data-op="crop">
          <p class="step-title">Crop</p>
          <div class="row">
            <StepInput label="Left" field="x" min={0} />
            <StepInput label="Top" field="y" min={0} />
            <StepInput label="Width" field="width" min={1} />
            <StepInput label="Height" field="height" min={1} />
          </div>
        </li>
      </template>
      <template id="step-resize">
        <li class="step" data-op="resize">
          <p class="step-title">Resize (give one side or both)</p>
          <div class="row">
            <StepInput label="Width" field="width" min={1} max={12000} />
            <StepInput label="Height" field="height" min={1} max={12000} />
            <label class="field">
              <span class="label">Fit</span>
              <select data-field="fit">
                <option value="inside">Inside: fit inside the box</option>
                <option value="cover">Cover: fill the box, cut the rest</option>
                <option value="contain">Contain: fit inside, pad with the background</option>
                <option value="fill">Fill: stretch to the box</option>
                <option value="outside">Outside: cover the box, no cut</option>
              </select>
            </label>
          </div>
        </li>
      </template>
      <template id="step-rotate">
        <li class="step" data-op="rotate">
          <p class="step-title">Rotate</p>
          <label class="field">
            <span class="label">Angle</span>
            <select data-field="angle">
              <option value="90">90° clockwise</option>
              <option value="180">180°</option>
              <option value="270">90° counter-clockwise</option>
            </select>
          </label>
        </li>
      </template>
      <template id="step-flip">
        <li class="step" data-op="flip">
          <p class="step-title">Flip</p>
          <label class="field">
            <span class="label">Axis</span>
            <select data-field="axis">
              <option value="horizontal">Horizontal: mirror left and right</option>
              <option value="vertical">Vertical: upside down</option>
            </select>
          </label>
        </li>
      </template>
    </fieldset>
  );
}

/** The chosen image: its facts, a preview, and on it the crop region, which can be drawn with the pointer. */
function ChosenImage() {
  return (
    <div id="chosen" class="chosen" hidden>
      <p id="image-facts" class="image-facts" role="status" />
      <div id="preview" class="preview">
        <img id="preview-image" alt="Preview of the chosen image" />
        <div id="crop-box" class="crop-box" hidden />
      </div>
      <p id="crop-hint" class="hint" hidden>
        Drag across the image to choose the crop region; the numbers below follow, and the box follows the numbers.
      </p>
      <p id="kept-hint" class="hint" role="status" hidden />
    </div>
  );
}

export function ConverterPage({ frame, summary }: { frame: PageFrame; summary: AccountSummary }) {
  const { quota } = summary;
  return (
    <Layout
      title="Converter"
      frame={frame}
      head={
        <>
          <meta name="csrf-token" content={frame.csrfToken} />
          <script src="/converter.js" defer />
        </>
      }
    >
      <h1>Converter</h1>
      <QuotaLine quota={quota} />
      <noscript>
        <p class="notice error">The converter needs JavaScript. The same operations are available through the API.</p>
      </noscript>
      <form
        id="converter"
        class="stack"
        data-max-bytes={quota.max_file_size_bytes}
        data-max-mb={quota.max_file_size_mb}
        data-remaining={quota.daily_remaining ?? ''}
        data-limit-message={quota.daily_max === null ? '' : dailyLimitMessage(quota.daily_max)}
      >
        <div class="drop-zone" id="drop-zone">
          <Field label="Image" id="image" hint="JPEG, PNG, WebP or AVIF. Choose a file or drop it here.">
            <input id="image" aria-describedby={hintId('image')} type="file" name="file" accept="image/jpeg,image/png,image/webp,image/avif,.jpg,.jpeg,.png,.webp,.avif" required />
          </Field>
        </div>
        <ChosenImage />
        <div class="row">
          <Field label="Operation" id="operation">
            <select id="operation" name="operation">
              <option value="convert">Convert</option>
              <option value="crop">Crop</option>
              <option value="resize">Resize</option>
              <option value="remove-metadata">Remove metadata</option>
              <option value="transform">Several steps</option>
            </select>
          </Field>
          <Field label="Format" id="format" hint="Crop, resize, remove metadata and several steps keep the input's format unless you choose one.">
            <select id="format" name="format" aria-describedby={hintId('format')}>
              <option value="">Same as input</option>
              <option value="webp" selected>
                WebP
              </option>
              <option value="avif">AVIF</option>
              <option value="jpg">JPEG</option>
              <option value="png">PNG</option>
              <option value="best">Best: the smallest of WebP, AVIF and JPEG</option>
            </select>
          </Field>
          <Field label="Quality" id="quality" hint="1-100, default 80. Ignored for PNG.">
            <input id="quality" aria-describedby={hintId('quality')} type="number" name="quality" min={1} max={100} step={1} inputmode="numeric" />
          </Field>
          <label class="check">
            <input type="checkbox" id="quality-auto" name="quality_auto" /> Auto: the smallest file that looks as good
          </label>
          <Field label="Target score" id="quality-target" hint="With Auto: SSIMULACRA 2 from 30 to 90 (70 is a typical web image). Empty: the format's default.">
            <input id="quality-target" aria-describedby={hintId('quality-target')} type="number" name="quality_target" min={30} max={90} step={0.5} inputmode="decimal" disabled />
          </Field>
          <Field label="Background" id="background" hint="What transparency becomes in JPEG, and the padding of Contain.">
            <input id="background" aria-describedby={hintId('background')} type="color" name="background" value="#ffffff" />
          </Field>
        </div>
        <fieldset data-operation="crop" hidden>
          <legend>Crop region, in pixels</legend>
          <div class="row">
            <Field label="Left" id="crop-x">
              <input id="crop-x" type="number" name="x" min={0} step={1} value="0" inputmode="numeric" />
            </Field>
            <Field label="Top" id="crop-y">
              <input id="crop-y" type="number" name="y" min={0} step={1} value="0" inputmode="numeric" />
            </Field>
            <Field label="Crop width" id="crop-width">
              <input id="crop-width" type="number" name="width" min={1} step={1} inputmode="numeric" />
            </Field>
            <Field label="Crop height" id="crop-height">
              <input id="crop-height" type="number" name="height" min={1} step={1} inputmode="numeric" />
            </Field>
          </div>
        </fieldset>
        <fieldset data-operation="resize" hidden>
          <legend>New size, in pixels (give one side or both)</legend>
          <div class="row">
            <Field label="Width" id="resize-width">
              <input id="resize-width" type="number" name="width" min={1} max={12000} step={1} inputmode="numeric" />
            </Field>
            <Field label="Height" id="resize-height">
              <input id="resize-height" type="number" name="height" min={1} max={12000} step={1} inputmode="numeric" />
            </Field>
            <label class="check">
              <input type="checkbox" name="keep_aspect_ratio" checked /> Keep aspect ratio
            </label>
          </div>
          <div class="row">
            <Field label="Fit" id="fit" hint="How the picture fills a width × height box. Left at the first choice, the checkbox decides.">
              <select id="fit" name="fit" aria-describedby={hintId('fit')}>
                <option value="">Inside, or stretch without the checkbox</option>
                <option value="inside">Inside: fit inside the box</option>
                <option value="cover">Cover: fill the box, cut the rest</option>
                <option value="contain">Contain: fit inside, pad with the background</option>
                <option value="fill">Fill: stretch to the box</option>
                <option value="outside">Outside: cover the box, no cut</option>
              </select>
            </Field>
            <Field label="Position" id="position" hint="Which part cover keeps (click the preview for a point), or where contain places the picture.">
              <select id="position" name="position" aria-describedby={hintId('position')} disabled>
                <option value="center">Center</option>
                <option value="north">North (top)</option>
                <option value="northeast">Northeast</option>
                <option value="east">East (right)</option>
                <option value="southeast">Southeast</option>
                <option value="south">South (bottom)</option>
                <option value="southwest">Southwest</option>
                <option value="west">West (left)</option>
                <option value="northwest">Northwest</option>
                <option value="entropy">Entropy: the busiest part</option>
                <option value="attention">Attention: the most interesting part</option>
              </select>
            </Field>
          </div>
        </fieldset>
        <StepsFieldset />
        <button type="submit">Convert</button>
        <div id="progress" class="progress" role="status" hidden>
          <progress max={100} />
          <span class="progress-text">Converting…</span>
        </div>
        <p id="error" role="alert" class="notice error" hidden />
      </form>
      <section id="result" class="result" hidden aria-labelledby="result-heading">
        <h2 id="result-heading">Result</h2>
        <img alt="Preview of the result" />
        <p class="result-facts" />
        <p>
          <a class="button" href="#">
            Download
          </a>
        </p>
      </section>
    </Layout>
  );
}
