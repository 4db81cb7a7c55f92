"""Numbered error messages and the exceptions that carry them (spaCy style).

Every message a user may see lives here, under a searchable code, so that a scholar who
reports ``E003`` and a developer grepping for it land on the same text.

Codes:
    E0xx  Leiden plain text (:func:`apollo_restore.data.readers.leiden.parse_leiden`).
    E1xx  corpus files (readers).
    E2xx  input and output files: bounded, UTF-8-checked reads (:mod:`apollo_restore.inputs`),
          interchange formats (:mod:`apollo_restore.data.formats`), files written as durable jobs
          (:mod:`apollo_restore.data.outputs`).
    E3xx  restoration requests (:mod:`apollo_restore.restoration.request`): the CLI, the Python API,
          ``predict`` and the web layer all validate through it.
    W3xx  warnings attached to a restoration (the reading is given, but is to be trusted less).
    E4xx  the text index and its packaged text (:mod:`apollo_restore.data.textindex`), its cache
          folder (:mod:`apollo_restore.data.indexcache`).
    W4xx  warnings about the text index (a damaged cache is built again).
    E5xx  model folders: verified on load (:mod:`apollo_restore.model.verify`; the attribution
          folder by :mod:`apollo_restore.attribution.folder`), their ensemble members
          (:func:`apollo_restore.restoration.load.load_restorer`), the device they are loaded on.
    E6xx  the command line: usage errors (``E601``), a training recipe's settings (``train``,
          ``finetune``, ``train-fsdp``), checked before any data is read
          (:mod:`apollo_restore.schema.training`), ``train``'s prepared corpus (``E610``), a
          command whose extra is not installed (``E606``, ``E607``: the package alone restores,
          serves and evaluates; training, the scale recipes and plots need ``[train]`` or ``[scale]``).
    E7xx  fitting a model folder on validation gaps (:mod:`apollo_restore.tune`, ``apollo-restore tune``).
    E8xx  attribution: dating and placing a text (:mod:`apollo_restore.attribution`, ``apollo-restore
          attribute``, ``POST /api/attribute``).
    Hxxx  the web server's own answers (HTTP: a body too large, a full queue, no index loaded;
          ``H500`` unexpected), sent as ``{"error": {"code", "message"}}`` by
          :mod:`apollo_restore.web.errors`; the web answers the codes above with their own letters.

``W`` is a warning's letter and nothing else: the reading (or the index) is given, to be trusted less.
"""

from __future__ import annotations


class Errors:
    """Message templates; format them with ``str.format`` keyword arguments."""

    # Leiden plain text
    E001 = "[E001] unclosed '{open}' opened at line {line}, column {column}"
    E002 = "[E002] stray '{close}' at line {line}, column {column}: no '{open}' is open"
    E003 = (
        "[E003] '{open}' at line {line}, column {column} is nested inside another '{open}' "
        "opened at line {outer_line}, column {outer_column}; close the first one before opening another"
    )
    E004 = (
        "[E004] empty brackets '{open}{close}' at line {line}, column {column}: "
        "write the lost letters as [.5] or [- - -]"
    )
    E005 = "[E005] bad lacuna length '{spec}' at line {line}, column {column}: a lacuna counts at least one letter"
    E006 = (
        "[E006] bad lacuna range '{spec}' at line {line}, column {column}: "
        "the lower bound must not exceed the upper bound"
    )
    E007 = "[E007] lacuna length '{spec}' at line {line}, column {column} is too long (at most {limit} letters)"
    # corpus files
    E101 = "[E101] cannot read corpus file {path}: {reason}"
    # interchange formats
    E201 = "[E201] {path}, line {line}: {reason}"
    E202 = "[E202] cannot read {path}: {reason}"
    E203 = (
        "[E203] {path} is not UTF-8 text: byte {offset:,}{where} (0x{byte:02x}) starts no character; "
        "save the file as UTF-8"
    )
    E204 = "[E204] {path} holds more than {limit:,} bytes{what}: split it, or check that it is the file meant"
    E205 = "[E205] cannot write {path}: {reason}"
    E206 = "[E206] {path} is the input {what} itself: writing there would destroy it; give another file"
    E207 = (
        "[E207] {path} already exists: give --force to replace it (it is kept until the new file is complete), "
        "or another file"
    )
    E208 = (
        "[E208] {partial} (the unfinished run's file) does not belong to {path}: {reason}; "
        "delete it, or give --restart to begin again"
    )
    E209 = (
        "[E209] {partial} (the unfinished run's file) was made with {was}, this run asks {now}: its lines "
        "would mix two settings; run with the same options to continue, or give --restart to begin again"
    )
    E210 = "[E210] another run is writing {path} now (it holds {lock}): wait for it to finish, or give another --out"
    E211 = (
        "[E211] {path} has no prediction for {missing:,} of the {total:,} gaps of {gapset} (the first: {first!r}): "
        "scoring them would count them as wrong; predict them (the same predict command continues), or give "
        "--allow-missing to score them as wrong, reported"
    )
    E212 = (
        "[E212] {path} has predictions for {unknown:,} id(s) that are no gap of {gapset} (the first: {first!r}): "
        "they would be scored against nothing and their times counted; give the predictions of this gap set, "
        "or remove those lines"
    )
    E220 = (
        "[E220] {path} is {what}, not a regular file: a model folder's files are plain files; "
        "copy the model folder again"
    )
    # restoration requests
    E300 = "[E300] the text is empty: paste a Greek text with its lost letters marked, e.g. [.5] or [- - -]"
    E301 = (
        "[E301] the text has no gap to restore: mark lost letters as [.5] (five letters), "
        "[ca.5] (about five), [.5-8] (five to eight), [- - -] (unknown) or ??? (one letter each)"
    )
    E302 = "[E302] the text has {n:,} characters; at most {limit:,} are restored at a time: split the text"
    E303 = (
        "[E303] {asked} {n:,} gaps; at most {limit:,} are restored in one request: ask for a few at a time "
        "(`only`, as the web page does), or split the text"
    )
    E304 = "[E304] gap {gap} asks for {n:,} letters; at most {limit:,} letters per gap are restored"
    E305 = "[E305] k = {k!r} candidates per gap: give a whole number from 1 to {limit}"
    E306 = "[E306] hint for gap {gap}: {reason}"
    E307 = "[E307] reading for gap {gap}: {reason}"
    E308 = (
        "[E308] too few Greek letters to restore: the text has {greek} Greek letters "
        "(at least {minimum} are needed) and {foreign} letters of other scripts{what}; "
        "type the text in Greek letters (transliterated or Latin text cannot be restored)"
    )
    E309 = (
        "[E309] unreadable character {char} at offset {position}{where}: remove control characters and broken Unicode"
    )
    E310 = "[E310] {name} must be {expected}, not {value!r}"
    E311 = (
        "[E311] threads = {threads!r}: give a whole number of torch threads from 1 to {limit} (this machine's cores), "
        "or none for the cores idle now (at most 2)"
    )
    E312 = (
        "[E312] a machine reading {mark} at line {line}, column {column}{where}: \u2045 \u2046 mark the model's "
        "readings in a restored text, not letters of the papyrus; write the gap as it was ([.7], [- - -]) to "
        "restore it again, or the reading in [ ] as your own supplement"
    )
    E313 = (
        "[E313] {name} looks like XML but cannot be read as an EpiDoc edition: {reason}; "
        'give a well-formed EpiDoc TEI file with a Greek <div type="edition">, or the text in Leiden'
    )
    E314 = (
        "[E314] {name}: {element} at line {line} {reason}; give the number of lost letters as a whole number "
        'from 1 to {limit}, or write extent="unknown"'
    )
    E326 = (
        "[E326] gap {gap} is {lines}, not letters: a reading of a few letters cannot stand for whole lines; "
        "leave it open (a reading fills a gap of letters: [.5], [ca.5], [- - -], .3)"
    )
    E327 = "[E327] no gap {gap} to restore (only): {reason}"
    E328 = "[E328] fills, gap {gap}: {reason}"
    E317 = (
        "[E317] the model gave probabilities that are not finite numbers ({shown}): nothing is shown rather "
        "than readings in no order; the model folder's weights or settings overflow: check them, or use another"
    )
    # warnings on a restoration
    W301 = (
        "[W301] {foreign} of the text's {total} letters are not Greek ({scripts}): they are left out of "
        "the context the model sees, so its readings deserve less trust"
    )
    W302 = "[W302] only {greek} Greek letters around the gaps: with so little context every reading is a guess"
    W303 = (
        "[W303] the text was read as Beta Code and converted to Greek letters ({preview}): "
        "check the letters, or give the text in Greek"
    )
    # the text index
    E401 = "[E401] refusing to index splits {splits}: only the train split may enter the text index"
    E412 = (
        "[E412] refusing to pack document {doc!r}: its text is not in norm.v1's one normal form "
        "(at character {at}: {found!r}, normalised {expected!r}); render it with the package's normaliser"
    )
    E402 = (
        "[E402] no packaged training text at {path}: reinstall the package, or pack one with scripts/pack_train_text.py"
    )
    E403 = "[E403] {path} starts with {found!r}, this code reads {expected!r}"
    E404 = "[E404] no text index in {path}: open it with no path to build the default one from the packaged text"
    E405 = "[E405] {path} holds an index of format/normaliser {found}, this code reads {expected}"
    E406 = "[E406] provenance needs at least {min_run} letters of text; got {letters}"
    E407 = (
        "[E407] unbounded-order model discount {discount!r}: "
        "give D in (0, 1], or (D1, D2, D3) within (0, 1], [0, 2], [0, 3]"
    )
    E408 = (
        "[E408] the text index in {folder} is damaged: {path} {reason}; nothing was read from it: "
        "build it again (apollo-restore index) or copy it again"
    )
    E409 = (
        "[E409] cannot use the cache folder {path} for the text index: {reason}; free some space, or set "
        "APOLLO_RESTORE_CACHE to a writable folder (an absolute path)"
    )
    E410 = (
        "[E410] APOLLO_RESTORE_CACHE={path!r} is a relative path: the text index (about 550 MB) would be built "
        "again in every working folder; give an absolute path"
    )
    E411 = (
        "[E411] another process has been building the text index {path} for {waited:.0f} s (it holds {lock}): "
        "wait for it to finish, or delete {lock} if no apollo-restore is running"
    )
    W401 = "[W401] the text index in the cache is damaged ({path} {reason}): building it again"
    # the command line
    E601 = "[E601] {message}"
    E602 = "[E602] {command}: {where} sets {field} = {value!r}; it must be {expected}"
    E610 = (
        "[E610] {command}: no prepared corpus at prepared={path} ({reason}): run apollo-restore prepare "
        "--out {path} first, or give prepared=DIR"
    )
    E611 = (
        "[E611] train-attribution: no labels at corpora={path} ({reason}): give corpora=DIR, the folder "
        "holding hgv-places-dates.tsv, hgv-place-hierarchy.tsv, ddb-trismegistos-2016.tar.xz and inscriptions/"
    )
    E606 = (
        "[E606] `apollo-restore {command}` needs the training extra ({missing} not installed): "
        "pip install 'apollo-restore[train]'"
    )
    E607 = (
        "[E607] `apollo-restore {command}` needs the scale extra ({missing} not installed): "
        "pip install 'apollo-restore[scale]'"
    )
    # model folders
    E501 = (
        "[E501] {folder}/apollo_restore.json names the ensemble member {member!r} but {path} is missing: "
        "restore the file, or leave the classical members out (--neural-only; neural_only=True)"
    )
    E502 = (
        "[E502] {folder}/apollo_restore.json has an ensemble with no language model weighted above 0: "
        'give a "neural", "infini" or "ngram" member a weight'
    )
    E503 = "[E503] {path}, line {line}, column {column}: not valid JSON ({reason}); copy the model folder again"
    E504 = "[E504] {path} holds {found}, not a JSON object of settings; copy the model folder again"
    E505 = "[E505] {path}: {field} = {value!r}; it must be {expected}"
    E506 = (
        "[E506] {path} is not a readable safetensors file ({reason}): it is truncated, empty or not a "
        "weights file; copy the model folder again"
    )
    E507 = (
        "[E507] {config} asks for {wanted} layers but {path} holds {found}: the config does not describe these weights"
    )
    E508 = "[E508] {path} lacks {n} tensor(s) that {config} needs: {names}"
    E509 = "[E509] {path}: tensor {name} has shape {found}, {config} needs {expected}"
    E510 = (
        "[E510] {path} holds {n} tensor(s) that {config} does not use: {names}; "
        "the config does not describe these weights"
    )
    E511 = "[E511] {path}: tensor {name} is of type {dtype}; {expected}"
    E512 = (
        "[E512] {path} has {tokens} tokens but {config} gives the model {vocab}: "
        "the tokenizer does not belong to these weights"
    )
    E513 = (
        "[E513] device {device!r} asked for, but this PyTorch sees no CUDA GPU "
        "(torch.cuda.is_available() is False): restore on the CPU (--device cpu)"
    )
    E514 = (
        "[E514] no model folder at {folder}: its {file} is missing (a model folder holds config.json, "
        "model.safetensors and tokenizer.json; leave the option out for the embedded model)"
    )
    E515 = "[E515] {folder} was trained with normaliser {found!r}; this code uses {expected!r}"
    E516 = "[E516] {folder} was trained with FIM layout {found!r}; this code knows {known}"
    E517 = (
        "[E517] {path} nests its values too deeply (more than about {limit:,} levels) to be a settings file: "
        "copy the model folder again"
    )
    E518 = (
        "[E518] {path}: tensor {name} holds {count:,} value(s) that are not finite numbers (NaN or infinity): "
        "the weights are damaged; copy the model folder again, or train it again"
    )
    E519 = "[E519] {path} ({field}) is not {expected}: {reason}; give the right file, or copy the model folder again"
    E520 = (
        '[E520] {path}: the ensemble entry is of the old format ("weights": {{...}}); write it as '
        '"members": [{{"name": ..., "weight": ..., "options": {{...}}}}, ...] (docs/model-folders.md)'
    )
    E521 = "[E521] {path}: {field} = {value!r} is no ensemble member this code knows; it knows {known}"
    E522 = "[E522] {path}: {field} gives {option!r}, which {name} does not take; it takes {known}"
    # E523–E528 are taken (by scripts/transport.py, not by the package)
    E529 = (
        "[E529] {folder}: the model's log-probabilities on a probe text are not finite numbers in {precision} "
        "({reason}): its weights overflow in this arithmetic; nothing would be restored in a meaningful order. "
        "Check the weights (retrain or copy the folder again), or try another precision"
    )
    E530 = (
        "[E530] {path} is a calibration of the format {found!r}, fitted on synthetic gaps only; this code "
        "calibrates real lacunae and synthetic gaps apart ({expected!r}): fit it again with "
        "apollo-restore tune --what calibration --force --model FOLDER --prepared DIR, or delete the file "
        "to restore uncalibrated"
    )
    E531 = (
        "[E531] {folder} has no apollo_restore.json: it records how the model reads text (normaliser, FIM "
        "layout), and a layout guessed from its absence gives garbage; copy the model folder again, or, for a "
        'folder from before v2, write one saying so: {{"fim_format": "apollo_restore fim.spm.v1"}}'
    )
    E532 = (
        "[E532] {path} was made with the n-gram features {found!r}; this code computes {expected!r}: its "
        "embedding rows would be read for other n-grams; train the folder again, or use the code it was made with"
    )
    E533 = (
        "[E533] {path}: tensor {name} holds {found}; it must hold {expected}: the arrays do not fit together; "
        "copy the model folder again"
    )
    E534 = "[E534] {path}{where}: {reason}; copy the model folder again"
    E535 = (
        "[E535] {path} labels the documents of the corpus {found}, but the text index {index} holds the corpus "
        "{expected}: the dated parallels would carry other documents' dates and places; use the text index the "
        "folder was made for (the packaged one), or leave the parallels out (--no-parallels)"
    )
    # fitting a model folder (apollo-restore tune)
    E701 = (
        "[E701] {folder} already holds {found}: give --force to replace them with the values fitted now, "
        "or tune a copy of the folder to keep them"
    )
    E702 = (
        "[E702] {folder}/apollo_restore.json has no ensemble entry: there are no member weights to fit "
        "(leave weights out of --what)"
    )
    E703 = (
        "[E703] no validation gap in {prepared} for source(s) {sources}: prepare a corpus with validation "
        "documents of those sources, or give other --source values"
    )
    E704 = (
        "[E704] {folder}: a calibration needs at least {minimum} validation gaps under each hint condition "
        "(exact, range, none), of real lacunae too unless --real-lacunae 0; this fit has {found}: nothing was "
        "written. Give more gaps (--per-length, --real-lacunae, --limit, --source), or leave calibration out of --what"
    )
    E705 = (
        "[E705] cannot read the prepared corpus {path}: {reason}; run apollo-restore prepare (with --out "
        "{prepared}) again"
    )
    E706 = (
        "[E706] tune did not write {path}: what it fitted would not load ({reason}); the folder is as it "
        "was. Report this with the command that gave it"
    )
    # attribution (dates and places)
    E801 = (
        "[E801] too few Greek letters to date or place: the text has {letters}, at least {minimum} are needed "
        "(lost letters do not count)"
    )
    E802 = "[E802] cannot load the attribution model {path}: {reason}"
    E803 = (
        "[E803] the attribution model gave {what} probabilities that are not finite numbers: nothing is answered "
        "rather than a date or places in no order; its arrays or settings overflow: check the folder, or use another"
    )
    W801 = (
        "[W801] the text does not read like the Greek texts the model learnt from ({why}): its places "
        "are left flat and its date spans the whole range; check that it is a Greek text"
    )
    W802 = (
        "[W802] the model names only places of papyri from Egypt and of inscriptions from {regions}; "
        "this text reads as an inscription or a literary text and may come from elsewhere: its places' "
        "probabilities hold only if it comes from one of those"
    )
    # the web server's own answers (HTTP)
    H001 = "[H001] request body larger than {limit} bytes; send a shorter text (or a smaller file)"
    H002 = "[H002] invalid request: {details}"
    H009 = "[H009] the server is busy restoring other texts (its queue is full); try again in a few seconds"
    H010 = (
        "[H010] no text index is loaded on this server: parallel passages and provenance need one "
        "(apollo-restore serve loads the packaged one, or --index DIR)"
    )
    H011 = "[H011] uploaded file: {reason}"
    H012 = "[H012] {reason}"
    H013 = "[H013] parallels request: {reason}"
    H014 = (
        "[H014] the restoration took longer than this server's limit of {seconds:g} s (it is busy, or the text is "
        "long); try again later, or restore fewer gaps at a time"
    )
    H015 = "[H015] request body not received within {seconds:g} s"
    H016 = "[H016] provenance request: {reason}"
    H017 = (
        "[H017] the server cannot finish this restoration within its limit of {seconds:g} s: about {wait:.0f} s of "
        "work is queued before it and it needs about {own:.0f} s; try again later, or restore fewer gaps at a time"
    )
    H500 = "[H500] internal error; the server log has the details"


class LeidenError(ValueError):
    """Malformed Leiden text, with the place of the problem.

    Attributes:
        position: 0-based character offset in the input.
        line: 1-based line number.
        column: 1-based column number (characters, not bytes).
    """

    def __init__(self, message: str, position: int, line: int, column: int) -> None:
        super().__init__(message)
        self.position = position
        self.line = line
        self.column = column


class CorpusError(ValueError):
    """A corpus file that cannot be read (not well-formed, wrong encoding, ...)."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(Errors.E101.format(path=path, reason=reason))
        self.path = path
        self.reason = reason


class FormatError(ValueError):
    """A malformed line in an interchange file (gap set, predictions, peer files)."""

    def __init__(self, path: str, line: int, reason: str) -> None:
        super().__init__(Errors.E201.format(path=path, line=line, reason=reason))
        self.path = path
        self.line = line
        self.reason = reason


class FileError(ValueError):
    """A file (or standard input) that cannot be read or written as asked (``E202``–``E212``;
    ``E610``: a training run's prepared corpus; ``E611``: ``train-attribution``'s labels).

    Attributes:
        code: the message code (``"E203"``).
        path: the file as the user named it (``"standard input"`` for stdin).
    """

    def __init__(self, code: str, path: str, **fields: object) -> None:
        super().__init__(getattr(Errors, code).format(path=path, **fields))
        self.code, self.path = code, path


class RequestError(ValueError):
    """A restoration request that cannot be served as asked (``E3xx``), with where it failed.

    Attributes:
        code: the message code (``"E304"``).
        gap: 1-based gap number concerned, if any.
        position: 0-based character offset in the text, if any.
        fields: the message's other fields (``reason``...), for a door that words it its own way.
    """

    def __init__(self, code: str, gap: int | None = None, position: int | None = None, **fields: object) -> None:
        super().__init__(getattr(Errors, code).format(gap=gap, position=position, **fields))
        self.code, self.gap, self.position, self.fields = code, gap, position, fields


class ModelFolderError(ValueError):
    """A model folder that cannot be loaded as it is (``E503``–``E512``, ``E515``, ``E517``, ``E518``,
    ``E520``–``E522``, ``E529``, ``E530``, ``E532``–``E535``), naming its file.

    Attributes:
        code: the message code (``"E506"``).
        path: the file concerned.
    """

    def __init__(self, code: str, path: object, **fields: object) -> None:
        super().__init__(getattr(Errors, code).format(path=path, **fields))
        self.code, self.path = code, path


class TextIndexError(ValueError):
    """A text index or its cache folder that cannot be used as it is (``E408``–``E411``), naming
    the file or folder.

    Attributes:
        code: the message code (``"E408"``).
        path: the file or folder concerned.
    """

    def __init__(self, code: str, path: object, **fields: object) -> None:
        super().__init__(getattr(Errors, code).format(path=path, **fields))
        self.code, self.path = code, path
        self.fields = fields


class ExtraMissing(ImportError):
    """A command that needs an optional extra which is not installed (``E606`` ``[train]``,
    ``E607`` ``[scale]``), naming the missing packages.

    Attributes:
        code: the message code (``"E606"``).
        missing: the packages not installed (as pip names them: ``pyyaml``).
    """

    def __init__(self, code: str, command: str, missing: list[str]) -> None:
        super().__init__(getattr(Errors, code).format(command=command, missing=", ".join(missing)))
        self.code, self.missing = code, missing


class RestoreStopped(RuntimeError):
    """A restoration stopped between two gaps because its caller asked (time limit, client gone)."""


class AttributionError(ValueError):
    """A text that cannot be dated or placed, or a missing attribution model (``E8xx``).

    Attributes:
        code: the message code (``"E801"``).
    """

    def __init__(self, code: str, **fields: object) -> None:
        super().__init__(getattr(Errors, code).format(**fields))
        self.code = code
